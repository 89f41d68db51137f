package bench

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/workload"
)

// Old runbooks carry sysbench 0.4 and 0.5 command lines: --test=oltp.lua,
// --oltp-tables-count, --num-threads, --max-time. sysbench 1.0.20 still runs
// them: it takes --num-threads, --max-requests, --max-time and --tx-rate as
// aliases of --threads, --events, --time and --rate (each with a warning,
// and only when set above its default), --test=SCRIPT as the script named on
// the command line, and runs 0.5's scripts (oltp.lua and its kin) in a
// compatibility mode that hands them their --oltp-* options. Those scripts
// send their statements as text, with the values written into them.
//
// legacyArgs rewrites such a line into today's options before it is parsed,
// and says, in warnings, what it changed: a runbook keeps running, and its
// reader learns the new names.

// renamed maps an old option name to today's. The oltp.lua of sysbench 0.5
// read the --oltp-* options; 1.0's scripts dropped the prefix. The
// --oltp-dist-* options are 0.4's names for --rand-*.
var renamed = map[string]string{
	"oltp-tables-count":      "tables",
	"oltp-table-size":        "table-size",
	"oltp-range-size":        "range-size",
	"oltp-point-selects":     "point-selects",
	"oltp-simple-ranges":     "simple-ranges",
	"oltp-sum-ranges":        "sum-ranges",
	"oltp-order-ranges":      "order-ranges",
	"oltp-distinct-ranges":   "distinct-ranges",
	"oltp-index-updates":     "index-updates",
	"oltp-non-index-updates": "non-index-updates",
	"oltp-delete-inserts":    "delete-inserts",
	"oltp-range-selects":     "range-selects",
	"oltp-auto-inc":          "auto-inc",
	"oltp-skip-trx":          "skip-trx",
	"oltp-secondary":         "secondary",
	"oltp-create-secondary":  "create-secondary",
	"mysql-table-engine":     "mysql-storage-engine",
	"mysql-table-options":    "create-table-options",
	"oltp-dist-type":         "rand-type",
	"oltp-dist-iter":         "rand-spec-iter",
	"oltp-dist-pct":          "rand-spec-pct",
	"oltp-dist-res":          "rand-spec-res",
}

// ignored are options of sysbench 0.4's built-in OLTP test that 0.5's
// oltp.lua never read: sysbench 1.0.20 accepts them with a 0.5 script and
// nothing changes. They are accepted here too, with a word that they do
// nothing.
var ignored = map[string]bool{
	"oltp-nontrx-mode":                true,
	"oltp-reconnect-mode":             true,
	"oltp-connect-delay":              true,
	"oltp-user-delay-min":             true,
	"oltp-user-delay-max":             true,
	"oltp-table-name":                 true,
	"oltp-sp-name":                    true,
	"oltp-point-select-mysql-handler": true,
	"oltp-point-select-all-cols":      true,
	"init-rng":                        true,
}

// aliases are sysbench 1.0.20's deprecated general options, in the order
// it warns about them. Each counts only when set above 0 (--num-threads
// above 1, its default), as in sysbench.
var aliases = []struct{ old, now string }{
	{"num-threads", "threads"},
	{"max-requests", "events"},
	{"max-time", "time"},
	{"tx-rate", "rate"},
}

// legacyScript is what one of sysbench 0.5's scripts becomes: today's
// workload that sends the same statements, given as text.
type legacyScript struct {
	workload string
	refused  string // why it cannot run, when it cannot
}

var legacyScripts = map[string]legacyScript{
	"oltp":             {workload: "oltp_read_write"},
	"oltp_simple":      {workload: "oltp_point_select"},
	"update_index":     {workload: "oltp_update_index"},
	"update_non_index": {workload: "oltp_update_non_index"},
	"delete":           {workload: "oltp_delete"},
	"insert":           {workload: "oltp_insert"},
	"select":           {refused: "sends SELECT pad FROM sbtestN WHERE id=N, which no sysbench 1.0 workload does; oltp_point_select sends the same with c in place of pad"},
	"parallel_prepare": {refused: "only prepares: use shakedown prepare oltp_read_write --tables N --threads N"},
	"common":           {refused: "is the library the other scripts include, not a test"},
}

// builtin04 are sysbench 0.4's built-in tests, named without .lua.
var builtin04 = map[string]bool{"oltp": true, "cpu": true, "fileio": true, "memory": true, "threads": true, "mutex": true}

// legacyArgs returns args with the old options in today's spelling, and
// the warnings to show. A line with nothing old comes back as it was.
func legacyArgs(args []string) ([]string, []string, error) {
	var (
		out      []string
		warns    []string
		notes    []string
		script   string // base name of a 0.5 script, "" when none
		set      = map[string]string{}
		testMode string
		readOnly bool
		writeOn  bool
		storage  string // --mysql-table-engine
		skipTrx  bool   // --oltp-skip-trx
	)
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "--") {
			if base := strings.TrimSuffix(filepath.Base(a), ".lua"); strings.HasSuffix(a, ".lua") && isLegacyScript(base) {
				script = base
				continue
			}
			out = append(out, a)
			continue
		}
		name, value, hasValue := strings.Cut(a[2:], "=")
		name = strings.ReplaceAll(name, "_", "-")
		// takeValue returns the option's value: after '=', or the next argument.
		takeValue := func() (string, error) {
			if hasValue {
				return value, nil
			}
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++
				return args[i], nil
			}
			return "", usagef("--%s: needs a value (--%s=VALUE)", name, name)
		}
		switch {
		case name == "test":
			v, err := takeValue()
			if err != nil {
				return nil, nil, err
			}
			warns = append(warns, "the --test option is deprecated. You can pass a script name or path on the command line without any options.")
			base := strings.TrimSuffix(filepath.Base(v), ".lua")
			switch _, known := workload.Lookup(base); {
			case known:
				out = append(out, base)
			case isLegacyScript(base) && strings.HasSuffix(v, ".lua"):
				script = base
			case builtin04[v]:
				return nil, nil, builtinError(v)
			default:
				out = append(out, v) // Parse names the workloads
			}
		case aliasOf(name) != "":
			v, err := takeValue()
			if err != nil {
				return nil, nil, err
			}
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return nil, nil, usagef("--%s: %q is not a whole number", name, v)
			}
			set[name] = strconv.Itoa(n)
		case renamed[name] != "":
			now := renamed[name]
			notes = append(notes, fmt.Sprintf("--%s is deprecated, use --%s instead", name, now))
			switch name {
			case "mysql-table-engine":
				storage = value
				if !hasValue && i+1 < len(args) {
					storage = args[i+1] // left in place for the parser
				}
			case "oltp-skip-trx":
				skipTrx, _ = sbflag.ParseBool(value)
				skipTrx = skipTrx || !hasValue
			}
			if hasValue {
				out = append(out, "--"+now+"="+value)
			} else {
				out = append(out, "--"+now)
			}
		case ignored[name]:
			notes = append(notes, ignoredNote(name))
		case name == "oltp-test-mode":
			v, err := takeValue()
			if err != nil {
				return nil, nil, err
			}
			switch v {
			case "complex", "simple", "nontrx", "sp":
				testMode = v
			default:
				return nil, nil, usagef("--oltp-test-mode: %q is not a test mode: complex, simple, nontrx or sp", v)
			}
		case name == "oltp-read-only" || name == "oltp-write-only":
			on := true
			if hasValue {
				b, err := sbflag.ParseBool(value)
				if err != nil {
					return nil, nil, usagef("--%s: %v", name, err)
				}
				on = b
			}
			if name == "oltp-read-only" {
				readOnly = on
			} else {
				writeOn = on
			}
		default:
			out = append(out, a)
		}
	}
	// The general aliases, as sysbench 1.0.20 applies them: each overrides
	// today's option when set above its default, and says so.
	for _, al := range aliases {
		v, ok := set[al.old]
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(v)
		if n > 1 || (n > 0 && al.old != "num-threads") {
			warns = append(warns, fmt.Sprintf("--%s is deprecated, use --%s instead", al.old, al.now))
			out = append(out, "--"+al.now+"="+v)
		}
	}
	warns = append(warns, notes...)
	if script == "" {
		for _, o := range []struct {
			given bool
			name  string
		}{{readOnly, "--oltp-read-only"}, {writeOn, "--oltp-write-only"}, {testMode != "", "--oltp-test-mode"}} {
			if o.given {
				return nil, nil, usagef("%s is an option of sysbench 0.5's oltp.lua (--test=oltp.lua); with a workload of today, name it: oltp_read_write, oltp_read_only, oltp_write_only or oltp_point_select", o.name)
			}
		}
		return out, warns, nil
	}
	ls := legacyScripts[script]
	if ls.refused != "" {
		return nil, nil, usagef("%s.lua, a sysbench 0.5 script, %s", script, ls.refused)
	}
	wl := ls.workload
	if script == "oltp" {
		switch {
		case readOnly && writeOn:
			return nil, nil, usagef("--oltp-read-only and --oltp-write-only are mutually exclusive")
		case readOnly:
			wl = "oltp_read_only"
		case writeOn:
			wl = "oltp_write_only"
		}
	} else if readOnly || writeOn || testMode != "" {
		return nil, nil, usagef("--oltp-read-only, --oltp-write-only and --oltp-test-mode are options of oltp.lua, not of %s.lua", script)
	}
	warns = append(warns, fmt.Sprintf("%s.lua is a sysbench 0.5 script: shakedown runs %s with --db-ps-mode=disable in its place, "+
		"which sends the same statements in the same mix, as text as %s.lua does", script, wl, script)+tableNote(script, wl))
	if testMode != "" && testMode != "complex" {
		warns = append(warns, fmt.Sprintf("--oltp-test-mode=%s is sysbench 0.4's: oltp.lua ignores it and runs its transaction, and so does this run; %s", testMode, modeHint(testMode)))
	}
	if script == "oltp" && strings.EqualFold(storage, "myisam") && !skipTrx {
		warns = append(warns, "with MyISAM, oltp.lua brackets each event with LOCK TABLES ... WRITE and UNLOCK TABLES; this run sends BEGIN and COMMIT there")
	}
	// The workload first, as on a sysbench 1.0 line; the text protocol
	// last, so that it holds: 0.5's scripts prepare nothing.
	out = append(append([]string{wl}, out...), "--db-ps-mode=disable")
	return out, warns, nil
}

func aliasOf(name string) string {
	for _, al := range aliases {
		if al.old == name {
			return al.now
		}
	}
	return ""
}

func isLegacyScript(base string) bool {
	_, ok := legacyScripts[base]
	return ok
}

// tableNote says where the legacy oltp.lua picks its table differently.
func tableNote(script, wl string) string {
	if script != "oltp" {
		return ""
	}
	return " (only the tables differ: oltp.lua picks one for the whole transaction, " + wl + " one for each group of statements)"
}

func ignoredNote(name string) string {
	if name == "init-rng" {
		return "--init-rng has no effect: the generator is seeded from the clock unless --rand-seed is set"
	}
	return fmt.Sprintf("--%s is sysbench 0.4's and has no effect: sysbench 0.5 and 1.0 ignore it too", name)
}

// modeHint says which workload of today is a 0.4 test mode.
func modeHint(mode string) string {
	switch mode {
	case "simple":
		return "0.4's simple mode, one point SELECT per event, is the workload oltp_point_select"
	case "nontrx":
		return "0.4's nontrx mode, one statement per event without a transaction, is oltp_point_select, oltp_update_index, oltp_update_non_index, oltp_insert or oltp_delete"
	}
	return "0.4's sp mode called a stored procedure; the sql workload can send CALL statements"
}

// builtinError answers --test=NAME for one of sysbench 0.4's built-in tests.
func builtinError(name string) error {
	if name == "oltp" {
		return usagef("--test=oltp is sysbench 0.4's built-in OLTP test, which sysbench 1.0 no longer has: name the workload instead: " +
			"oltp_read_write (0.4's --oltp-test-mode=complex), oltp_read_only (with --oltp-read-only), oltp_point_select (simple)")
	}
	return usagef("--test=%s is sysbench's %s test: shakedown runs database workloads only; workloads: %s", name, name, strings.Join(workload.Names(), ", "))
}
