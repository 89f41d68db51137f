package bench

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/usage"
)

// The first line of old runbooks, with sysbench 0.5's script and options.
var seedLine = strings.Fields("--test=/opt/sysbench/share/sysbench/oltp.lua --oltp-tables-count=10 --oltp-table-size=5000000 " +
	"--mysql-db=sysbench --mysql-user=sysbench --mysql-password=sysbench --mysql-socket=/srv/my3306/run/mysql.sock " +
	"--max-time=14400 --max-requests=0 --num-threads=12 --oltp-test-mode=complex")

func TestLegacyLines(t *testing.T) {
	testWarn := "the --test option is deprecated. You can pass a script name or path on the command line without any options."
	cases := []struct {
		name     string
		args     []string
		workload string
		opts     map[string]string // effective values
		warns    []string          // each a prefix of one warning, in order
	}{
		{"the seed line", seedLine, "oltp_read_write",
			map[string]string{"tables": "10", "table-size": "5000000", "threads": "12", "time": "14400", "events": "0", "db-ps-mode": "disable"},
			[]string{testWarn, "--num-threads is deprecated, use --threads instead", "--max-time is deprecated, use --time instead",
				"--oltp-tables-count is deprecated, use --tables instead", "--oltp-table-size is deprecated, use --table-size instead",
				"oltp.lua is a sysbench 0.5 script: shakedown runs oltp_read_write with --db-ps-mode=disable"}},
		{"oltp.lua read-only with every count", []string{"/usr/share/sysbench/tests/include/oltp_legacy/oltp.lua", "--oltp-read-only=on",
			"--oltp-point-selects=3", "--oltp-simple-ranges=2", "--oltp-sum-ranges=0", "--oltp-order-ranges=4", "--oltp-distinct-ranges=5",
			"--oltp-range-size=7", "--oltp-skip-trx=on", "--oltp-range-selects=off", "--oltp_auto_inc=off", "--oltp-secondary=on", "--oltp-create-secondary=off",
			"--mysql-table-engine=myisam", "--oltp-dist-type=uniform"}, "oltp_read_only",
			map[string]string{"point-selects": "3", "simple-ranges": "2", "sum-ranges": "0", "order-ranges": "4", "distinct-ranges": "5", "range-size": "7",
				"skip-trx": "on", "range-selects": "off", "auto-inc": "off", "secondary": "on", "create-secondary": "off",
				"mysql-storage-engine": "myisam", "rand-type": "uniform", "db-ps-mode": "disable"},
			[]string{"--oltp-point-selects is deprecated, use --point-selects instead", "--oltp-simple-ranges is deprecated", "--oltp-sum-ranges is deprecated",
				"--oltp-order-ranges is deprecated", "--oltp-distinct-ranges is deprecated", "--oltp-range-size is deprecated", "--oltp-skip-trx is deprecated",
				"--oltp-range-selects is deprecated", "--oltp-auto-inc is deprecated, use --auto-inc instead", "--oltp-secondary is deprecated",
				"--oltp-create-secondary is deprecated", "--mysql-table-engine is deprecated, use --mysql-storage-engine instead",
				"--oltp-dist-type is deprecated, use --rand-type instead", "oltp.lua is a sysbench 0.5 script: shakedown runs oltp_read_only"}},
		{"oltp.lua write-only, updates and delete-inserts", []string{"--test=oltp.lua", "--oltp-write-only", "--oltp-index-updates=2",
			"--oltp-non-index-updates=3", "--oltp-delete-inserts=4", "--mysql-table-engine=myisam"}, "oltp_write_only",
			map[string]string{"index-updates": "2", "non-index-updates": "3", "delete-inserts": "4"},
			[]string{testWarn, "--oltp-index-updates is deprecated", "--oltp-non-index-updates is deprecated", "--oltp-delete-inserts is deprecated",
				"--mysql-table-engine is deprecated", "oltp.lua is a sysbench 0.5 script: shakedown runs oltp_write_only",
				"with MyISAM, oltp.lua brackets each event with LOCK TABLES"}},
		{"a 0.4 test mode oltp.lua ignores", []string{"--test=oltp.lua", "--oltp-test-mode=simple", "--oltp-nontrx-mode=select"}, "oltp_read_write", nil,
			[]string{testWarn, "--oltp-nontrx-mode is sysbench 0.4's and has no effect", "oltp.lua is a sysbench 0.5 script",
				"--oltp-test-mode=simple is sysbench 0.4's: oltp.lua ignores it and runs its transaction"}},
		{"1.0 with its deprecated names", []string{"--test=/usr/share/sysbench/oltp_point_select.lua", "--num-threads=4", "--max-requests=500",
			"--max-time=0", "--tx-rate=50", "--threads=2", "--events=9"}, "oltp_point_select",
			map[string]string{"threads": "4", "events": "500", "time": "10", "rate": "50", "db-ps-mode": "auto"},
			[]string{testWarn, "--num-threads is deprecated", "--max-requests is deprecated", "--tx-rate is deprecated, use --rate instead"}},
		{"deprecated names at their defaults change nothing", []string{"oltp_read_only", "--num-threads=1", "--max-requests=0", "--threads=3", "--events=7"},
			"oltp_read_only", map[string]string{"threads": "3", "events": "7"}, nil},
		{"values after a space", []string{"oltp_read_only", "--num-threads", "6", "--oltp-tables-count", "3"}, "oltp_read_only",
			map[string]string{"threads": "6", "tables": "3"}, []string{"--num-threads is deprecated", "--oltp-tables-count is deprecated"}},
		{"a 0.5 script named without --test", []string{"/opt/sysbench/update_index.lua", "--oltp-tables-count=2"}, "oltp_update_index",
			map[string]string{"tables": "2", "db-ps-mode": "disable"},
			[]string{"--oltp-tables-count is deprecated", "update_index.lua is a sysbench 0.5 script: shakedown runs oltp_update_index"}},
		{"init-rng", []string{"oltp_insert", "--init-rng=on"}, "oltp_insert", nil, []string{"--init-rng has no effect"}},
		{"a line of today", []string{"oltp_read_only", "--tables=2", "--skip_trx=1", "--percentile=95"}, "oltp_read_only",
			map[string]string{"tables": "2", "skip-trx": "on"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j, err := Parse("run", tc.args, &bytes.Buffer{})
			if err != nil {
				t.Fatalf("got %v, want the line to parse", err)
			}
			if j.Workload() != tc.workload {
				t.Errorf("workload: got %s, want %s", j.Workload(), tc.workload)
			}
			opts := j.Options()
			for k, want := range tc.opts {
				if opts[k] != want {
					t.Errorf("--%s: got %q, want %q", k, opts[k], want)
				}
			}
			if len(j.Warnings) != len(tc.warns) {
				t.Errorf("got %d warnings, want %d:\n%s", len(j.Warnings), len(tc.warns), strings.Join(j.Warnings, "\n"))
			}
			for i, w := range tc.warns {
				if i < len(j.Warnings) && !strings.HasPrefix(j.Warnings[i], w) {
					t.Errorf("warning %d: got %q, want it to start %q", i, j.Warnings[i], w)
				}
			}
		})
	}
}

func TestLegacyBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"read-only and write-only", []string{"--test=oltp.lua", "--oltp-read-only=on", "--oltp-write-only=on"}, "mutually exclusive"},
		{"test mode with a workload of today", []string{"oltp_read_write", "--oltp-test-mode=complex"}, "--oltp-test-mode is an option of sysbench 0.5's oltp.lua"},
		{"read-only with a workload of today", []string{"oltp_point_select", "--oltp-read-only=on"}, "name it: oltp_read_write, oltp_read_only"},
		{"unknown test mode", []string{"--test=oltp.lua", "--oltp-test-mode=fast"}, `--oltp-test-mode: "fast" is not a test mode`},
		{"0.4's built-in oltp", []string{"--test=oltp", "--oltp-test-mode=complex"}, "--test=oltp is sysbench 0.4's built-in OLTP test"},
		{"0.4's cpu test", []string{"--test=cpu"}, "shakedown runs database workloads only"},
		{"select.lua", []string{"--test=select.lua"}, "select.lua, a sysbench 0.5 script, sends SELECT pad"},
		{"not a number", []string{"oltp_read_only", "--num-threads=many"}, `--num-threads: "many" is not a whole number`},
		{"no value", []string{"oltp_read_only", "--max-time"}, "--max-time: needs a value"},
		{"no script", []string{"--test=nonsense.lua"}, `unknown workload "nonsense.lua"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("run", tc.args, &bytes.Buffer{})
			var ue *usage.Error
			if !errors.As(err, &ue) {
				t.Fatalf("got %v, want a usage error", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// FuzzLegacyArgs feeds legacyArgs command lines: it never panics, and a
// line it accepts keeps every argument it did not rewrite.
func FuzzLegacyArgs(f *testing.F) {
	f.Add(strings.Join(seedLine, " "))
	f.Add("--test=oltp.lua --oltp-read-only --num-threads 4 run")
	f.Add("oltp_read_only --max-time= --oltp-test-mode")
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Fields(line)
		out, _, err := legacyArgs(args)
		if err != nil {
			return
		}
		for _, a := range args {
			if !strings.HasPrefix(a, "--") && !strings.HasSuffix(a, ".lua") && !contains(out, a) && !isNumber(a) {
				t.Errorf("%q lost from %q: got %q", a, args, out)
			}
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// isNumber: an alias's value, taken as strconv.Atoi reads it ("+0" too),
// which legacyArgs rewrites or drops.
func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}
