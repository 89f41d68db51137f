package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

// readmeExitCodes reads the README's exit code table: meaning -> code.
func readmeExitCodes(t *testing.T) map[string]int {
	t.Helper()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	rowRE := regexp.MustCompile(`(?m)^\| (\d) \| ([^|]+?) \|`)
	codes := map[string]int{}
	for _, m := range rowRE.FindAllStringSubmatch(string(b), -1) {
		n, _ := strconv.Atoi(m[1])
		codes[m[2]] = n
	}
	for _, want := range []string{"ok", "the tool failed", "bad usage", "differences found"} {
		if _, ok := codes[want]; !ok {
			t.Fatalf("README.md: the exit code table has no row %q (rows: %v)", want, codes)
		}
	}
	return codes
}

// exitFixture is what the cases of TestExitCodes point commands at.
type exitFixture struct {
	live        string // a server that answers, database sbtest
	server      string // the same server without a database
	down        string // a port nobody listens on
	denied      string // the live server, a user that does not exist
	noDB        string // the live server, a database that does not exist
	diffSrc     string // two databases that differ by a row
	diffDst     string
	otherServer string // a server whose variables differ from live's
	dir         string
	store       string // a results store holding one run
	plan        string // a plan on the live server
	badPlan     string // a plan with a YAML mistake
	downPlan    string // a plan whose target is down
	noDBPlan    string // a plan whose target names a database that does not exist
	slowLog     string // a slow log of one SELECT from table t
	garbage     string // a file in no format capture reads
	capture     string // slowLog's capture file
	emptyLog    string // a slow log whose one entry has no statement
	rehearsal   string // a rehearsal plan of diffSrc to diffDst
	downRehears string // a rehearsal plan whose candidate is down
}

// unwritable is an output path that cannot be written, even by root: its
// directory is a file.
func (f *exitFixture) unwritable() string { return filepath.Join(f.garbage, "out") }

func newExitFixture(t *testing.T) *exitFixture {
	f := &exitFixture{live: sandboxtest.URL(t), dir: t.TempDir()}
	tg, err := target.Parse(f.live)
	if err != nil {
		t.Fatal(err)
	}
	host := tg.Endpoints()[0].String()
	f.server = "mysql://shakedown@" + host + "/"
	f.denied = "mysql://nosuchuser@" + host + "/sbtest"
	f.noDB = "mysql://shakedown@" + host + "/nosuchdb"
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f.down = fmt.Sprintf("mysql://shakedown@%s/sbtest?timeout=2s", l.Addr())
	l.Close()

	f.diffSrc, f.diffDst, _, _ = verifyDBs(t, "exitcodes")
	for _, u := range []string{f.diffSrc, f.diffDst} {
		dt, _ := target.Parse(u)
		db, err := dt.Open(dt.Endpoints()[0], 1)
		if err != nil {
			t.Fatal(err)
		}
		vfyExec(t, db, "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
		if u == f.diffDst {
			vfyExec(t, db, "INSERT INTO t VALUES (2)")
		}
		db.Close()
	}
	f.otherServer = sandboxtest.Start(t, "max_connections=321").URL()

	f.store = filepath.Join(f.dir, "runs.db")
	if code, _, errOut := runCLI(context.Background(), "run", "ping", "--target", f.live, "--time", "1", "--store", f.store); code != 0 {
		t.Fatalf("fill the store: exit %d: %s", code, errOut)
	}
	write := fileWriter(t, f.dir)
	plan := "targets:\n  - name: a\n    url: %s\n    role: control\nworkloads: [ping]\nthreads: [1]\ntime: 1\n"
	f.plan = write("plan.yaml", fmt.Sprintf(plan, f.live))
	f.downPlan = write("down.yaml", fmt.Sprintf(plan, f.down))
	f.noDBPlan = write("nodb.yaml", fmt.Sprintf(plan, f.noDB))
	f.badPlan = write("bad.yaml", "targets:\n  - name: a\n\turl: x\n")
	rehearsal := "source: {name: a, url: %q}\ncandidates: [{name: b, url: %q}]\nsteps: {verify: {continue_on_failure: true}}\n"
	f.rehearsal = write("rehearsal.yaml", fmt.Sprintf(rehearsal, f.diffSrc, f.diffDst))
	f.downRehears = write("rehearsal-down.yaml", fmt.Sprintf(rehearsal, f.diffSrc, f.down))
	f.slowLog = write("slow.log", "# Time: 261122 21:56:55\n# User@Host: a[a] @  [127.0.0.1]\n# Thread_id: 4  Schema: exitcodes  QC_hit: No\n"+
		"# Query_time: 0.1  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 1\nSET timestamp=1;\nSELECT COUNT(*) FROM t;\n")
	f.garbage = write("garbage.txt", "this is no log\n")
	f.emptyLog = write("empty.log", "# Time: 261122 21:56:55\n# User@Host: a[a] @  [127.0.0.1]\n# Query_time: 0.1  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 1\nSET timestamp=1;\n")
	f.capture = filepath.Join(f.dir, "slow.capture")
	if code, _, errOut := runCLI(context.Background(), "capture", f.slowLog, "-o", f.capture); code != 0 {
		t.Fatalf("capture the slow log: exit %d: %s", code, errOut)
	}
	return f
}

// TestExitCodes runs every command into each kind of failure it can meet
// and checks its exit code against the README's table. A new command adds
// its rows here.
func TestExitCodes(t *testing.T) {
	codes := readmeExitCodes(t)
	const (
		ok      = "ok"
		failed  = "the tool failed"
		usage   = "bad usage"
		differs = "differences found"
	)
	f := newExitFixture(t)
	sandboxHome := map[string]string{"SHAKEDOWN_HOME": f.dir}
	cases := []struct {
		cmd, kind string // kind: what goes wrong, in words
		meaning   string // the README row it must exit with
		env       map[string]string
		args      func(f *exitFixture) []string
	}{
		{"(none)", "no command", usage, nil, func(f *exitFixture) []string { return nil }},
		{"(none)", "unknown command", usage, nil, func(f *exitFixture) []string { return []string{"rnu"} }},
		{"help", "ok", ok, nil, func(f *exitFixture) []string { return []string{"help", "run"} }},
		{"help", "unknown topic", usage, nil, func(f *exitFixture) []string { return []string{"help", "nosuch"} }},
		{"version", "ok", ok, nil, func(f *exitFixture) []string { return []string{"version"} }},
		{"version", "an argument", usage, nil, func(f *exitFixture) []string { return []string{"version", "x"} }},

		{"prepare", "ok", ok, nil, func(f *exitFixture) []string {
			return []string{"prepare", "oltp_point_select", "--target", f.diffSrc, "--tables", "1", "--table-size", "10"}
		}},
		{"prepare", "bad option", usage, nil, func(f *exitFixture) []string { return []string{"prepare", "oltp_point_select", "--tabels=1"} }},
		{"prepare", "no such database", usage, nil, func(f *exitFixture) []string { return []string{"prepare", "oltp_point_select", "--target", f.noDB} }},
		{"prepare", "server down", failed, nil, func(f *exitFixture) []string { return []string{"prepare", "oltp_point_select", "--target", f.down} }},
		{"run", "ok", ok, nil, func(f *exitFixture) []string {
			return []string{"run", "oltp_point_select", "--target", f.diffSrc, "--tables", "1", "--table-size", "10", "--time", "1"}
		}},
		{"run", "bad option", usage, nil, func(f *exitFixture) []string { return []string{"run", "ping", "--time=abc"} }},
		{"run", "unknown workload", usage, nil, func(f *exitFixture) []string { return []string{"run", "oltp_read_writ"} }},
		{"run", "bad URL parameter", usage, nil, func(f *exitFixture) []string { return []string{"run", "ping", "--target", f.live + "?tls=maybe"} }},
		{"run", "no such database", usage, nil, func(f *exitFixture) []string { return []string{"run", "ping", "--target", f.noDB, "--time", "1"} }},
		{"run", "server down", failed, nil, func(f *exitFixture) []string { return []string{"run", "ping", "--target", f.down, "--time", "1"} }},
		{"run", "access denied", failed, nil, func(f *exitFixture) []string { return []string{"run", "ping", "--target", f.denied, "--time", "1"} }},
		{"run", "unreadable --password-file", usage, nil, func(f *exitFixture) []string {
			return []string{"run", "ping", "--target", f.live, "--password-file", filepath.Join(f.dir, "nope")}
		}},
		{"cleanup", "ok", ok, nil, func(f *exitFixture) []string {
			return []string{"cleanup", "oltp_point_select", "--target", f.diffSrc, "--tables", "1"}
		}},
		{"cleanup", "no such database", usage, nil, func(f *exitFixture) []string { return []string{"cleanup", "oltp_point_select", "--target", f.noDB} }},
		{"cleanup", "server down", failed, nil, func(f *exitFixture) []string { return []string{"cleanup", "oltp_point_select", "--target", f.down} }},
		{"sysbench", "ok", ok, nil, func(f *exitFixture) []string {
			return []string{"sysbench", "ping", "--target", f.live, "--time", "1", "run"}
		}},
		{"sysbench", "no such database", usage, nil, func(f *exitFixture) []string {
			return []string{"sysbench", "oltp_read_only", "--target", f.noDB, "--time", "1", "run"}
		}},
		{"sysbench", "no command at the end", usage, nil, func(f *exitFixture) []string { return []string{"sysbench", "ping", "--time", "1"} }},
		{"capacity", "bad SLO", usage, nil, func(f *exitFixture) []string {
			return []string{"capacity", "ping", "--target", f.live, "--slo", "p99<20ms"}
		}},
		{"capacity", "--rate", usage, nil, func(f *exitFixture) []string {
			return []string{"capacity", "ping", "--target", f.live, "--slo", "p99<=20ms", "--rate=10"}
		}},
		{"capacity", "server down", failed, nil, func(f *exitFixture) []string {
			return []string{"capacity", "ping", "--target", f.down, "--slo", "p99<=20ms", "--step-time=1", "--step-warmup=0"}
		}},
		{"slap", "ok", ok, nil, func(f *exitFixture) []string {
			return []string{"slap", "--target", f.live, "--create-schema=sbtest", "--query=select 1", "--concurrency=1", "--iterations=1", "--silent"}
		}},
		{"slap", "bad option", usage, nil, func(f *exitFixture) []string { return []string{"slap", "--concurency=1"} }},
		{"slap", "a schema that holds tables, to drop", usage, nil, func(f *exitFixture) []string {
			// exitcodes_src is diffSrc's database, which holds table t.
			return []string{"slap", "--target", f.live, "-a", "--create-schema=exitcodes_src", "--concurrency=1", "--iterations=1"}
		}},
		{"slap", "server down", failed, nil, func(f *exitFixture) []string {
			return []string{"slap", "--target", f.down, "--query=select 1", "--concurrency=1", "--iterations=1"}
		}},

		{"sandbox", "ok", ok, sandboxHome, func(f *exitFixture) []string { return []string{"sandbox", "list"} }},
		{"sandbox", "bad name", usage, sandboxHome, func(f *exitFixture) []string { return []string{"sandbox", "up", "a/b"} }},
		{"sandbox", "no such sandbox", usage, sandboxHome, func(f *exitFixture) []string { return []string{"sandbox", "down", "nope"} }},
		{"sweep", "ok", ok, nil, func(f *exitFixture) []string { return []string{"sweep", f.plan, "--dry-run"} }},
		{"sweep", "a plan with a mistake", usage, nil, func(f *exitFixture) []string { return []string{"sweep", f.badPlan} }},
		{"sweep", "no such plan", usage, nil, func(f *exitFixture) []string { return []string{"sweep", filepath.Join(f.dir, "nope.yaml")} }},
		{"sweep", "no such database", usage, nil, func(f *exitFixture) []string { return []string{"sweep", f.noDBPlan, "--dry-run"} }},
		{"sweep", "target down", failed, nil, func(f *exitFixture) []string { return []string{"sweep", f.downPlan, "--dry-run"} }},
		{"report", "ok", ok, nil, func(f *exitFixture) []string { return []string{"report", "--store", f.store, "--runs", "all"} }},
		{"report", "bad format", usage, nil, func(f *exitFixture) []string { return []string{"report", "--store", f.store, "--format", "nope"} }},
		{"report", "no such store", usage, nil, func(f *exitFixture) []string { return []string{"report", "--store", filepath.Join(f.dir, "nope.db")} }},
		{"demo", "bad option", usage, nil, func(f *exitFixture) []string { return []string{"demo", "--bogus"} }},

		{"watch", "ok", ok, nil, func(f *exitFixture) []string {
			return []string{"watch", f.server, "--count", "1", "--interval", "100ms"}
		}},
		{"watch", "bad option", usage, nil, func(f *exitFixture) []string { return []string{"watch", f.server, "--intervl=1s"} }},
		{"watch", "no such database", usage, nil, func(f *exitFixture) []string { return []string{"watch", f.noDB, "--count", "1"} }},
		{"watch", "server down", failed, nil, func(f *exitFixture) []string { return []string{"watch", f.down, "--count", "1"} }},
		{"watch", "a password that needs encoding", usage, nil, func(f *exitFixture) []string {
			return []string{"watch", "mysql://u:p@ss/w:rd#1@127.0.0.1/", "--count", "1"}
		}},
		{"vars", "ok", ok, nil, func(f *exitFixture) []string { return []string{"vars", "diff", f.server, f.live} }},
		{"vars", "differences", differs, nil, func(f *exitFixture) []string { return []string{"vars", "diff", f.server, f.otherServer} }},
		{"vars", "one target", usage, nil, func(f *exitFixture) []string { return []string{"vars", "diff", f.server} }},
		{"vars", "no such database", usage, nil, func(f *exitFixture) []string { return []string{"vars", "diff", f.noDB, f.server} }},
		{"vars", "server down", failed, nil, func(f *exitFixture) []string { return []string{"vars", "diff", f.server, f.down} }},
		{"vars", "bisect: no differing variables", ok, nil, func(f *exitFixture) []string {
			return []string{"vars", "bisect", f.live, f.live, "--workload", "oltp_point_select", "--threads", "1"}
		}},
		{"vars", "bisect without --allow-set-global", usage, nil, func(f *exitFixture) []string {
			return []string{"vars", "bisect", f.live, f.otherServer, "--workload", "oltp_point_select", "--threads", "1"}
		}},
		{"vars", "bisect: no such database", usage, nil, func(f *exitFixture) []string {
			return []string{"vars", "bisect", f.live, f.noDB, "--workload", "oltp_point_select", "--threads", "1"}
		}},
		{"vars", "bisect: server down", failed, nil, func(f *exitFixture) []string {
			return []string{"vars", "bisect", f.live, f.down, "--workload", "oltp_point_select", "--threads", "1"}
		}},
		{"vars", "bisect --undo: no such file", usage, nil, func(f *exitFixture) []string {
			return []string{"vars", "bisect", "--undo", filepath.Join(f.dir, "nope.json")}
		}},
		{"host", "ok", ok, nil, func(f *exitFixture) []string { return []string{"host", "facts"} }},
		{"host", "differences", differs, nil, func(f *exitFixture) []string {
			return []string{"host", "diff", hostFactsFile(t, f.dir, "a", "max 100000"), hostFactsFile(t, f.dir, "b", "50000 100000")}
		}},
		{"host", "bad --pid", usage, nil, func(f *exitFixture) []string { return []string{"host", "facts", "--pid", "-1"} }},
		{"host", "no such file", usage, nil, func(f *exitFixture) []string {
			return []string{"host", "diff", "local", filepath.Join(f.dir, "nope.json")}
		}},
		{"host", "server down", failed, nil, func(f *exitFixture) []string { return []string{"host", "facts", f.down} }},
		{"verify", "ok", ok, nil, func(f *exitFixture) []string { return []string{"verify", f.diffSrc, f.diffSrc} }},
		{"verify", "differences", differs, nil, func(f *exitFixture) []string { return []string{"verify", f.diffSrc, f.diffDst} }},
		{"verify", "bad option", usage, nil, func(f *exitFixture) []string { return []string{"verify", f.diffSrc, f.diffDst, "--threads=x"} }},
		{"verify", "no such database", usage, nil, func(f *exitFixture) []string { return []string{"verify", f.noDB, f.diffDst} }},
		{"verify", "no such table", usage, nil, func(f *exitFixture) []string { return []string{"verify", f.diffSrc, f.diffDst, "--tables", "nosuch"} }},
		{"verify", "server down", failed, nil, func(f *exitFixture) []string { return []string{"verify", f.down, f.diffDst} }},
		{"verify", "access denied", failed, nil, func(f *exitFixture) []string { return []string{"verify", f.denied, f.diffDst} }},
		{"copy", "without --allow-write", usage, nil, func(f *exitFixture) []string { return []string{"copy", f.diffSrc, f.diffSrc} }},
		{"copy", "server down", failed, nil, func(f *exitFixture) []string { return []string{"copy", f.down, f.down, "--allow-write"} }},
		{"follow", "without --allow-write", usage, nil, func(f *exitFixture) []string { return []string{"follow", f.diffSrc, f.diffDst} }},
		{"follow", "a source without a binary log", usage, nil, func(f *exitFixture) []string {
			return []string{"follow", f.diffSrc, f.diffDst, "--allow-write", "--progress", "0"}
		}},
		{"follow", "server down", failed, nil, func(f *exitFixture) []string { return []string{"follow", f.down, f.down, "--allow-write"} }},
		{"mirror", "without --candidate", usage, nil, func(f *exitFixture) []string { return []string{"mirror", "--control", f.live} }},
		{"mirror", "--listen beyond this host", usage, nil, func(f *exitFixture) []string {
			return []string{"mirror", "--control", f.live, "--candidate", "new=" + f.live, "--listen", "0.0.0.0:0"}
		}},
		{"mirror", "server down", failed, nil, func(f *exitFixture) []string {
			return []string{"mirror", "--control", f.down, "--candidate", "new=" + f.down, "--listen", "127.0.0.1:0"}
		}},
		{"mirror", "unwritable --json", failed, nil, func(f *exitFixture) []string {
			return []string{"mirror", "--control", f.down, "--candidate", "new=" + f.down, "--listen", "127.0.0.1:0", "--json", f.unwritable()}
		}},
		{"cutover", "without --allow-set-global", usage, nil, func(f *exitFixture) []string { return []string{"cutover", f.diffSrc, f.diffDst} }},
		{"cutover", "a target never followed", usage, nil, func(f *exitFixture) []string {
			return []string{"cutover", f.diffSrc, f.diffDst, "--allow-set-global"}
		}},
		{"cutover", "server down", failed, nil, func(f *exitFixture) []string { return []string{"cutover", f.down, f.down, "--allow-set-global"} }},
		{"analyze", "ok", ok, nil, func(f *exitFixture) []string { return []string{"analyze", f.diffSrc} }},
		{"analyze", "no such database", usage, nil, func(f *exitFixture) []string { return []string{"analyze", f.server, "--databases", "nosuch"} }},
		{"analyze", "no such table", usage, nil, func(f *exitFixture) []string { return []string{"analyze", f.diffSrc, "--tables", "nosuch"} }},
		{"analyze", "server down", failed, nil, func(f *exitFixture) []string { return []string{"analyze", f.down} }},
		{"check", "differences", differs, nil, func(f *exitFixture) []string { return []string{"check", f.diffSrc, f.diffDst} }},
		{"check", "bad option", usage, nil, func(f *exitFixture) []string { return []string{"check", f.diffSrc, f.diffDst, "--copy-time=0"} }},
		{"check", "no such database", usage, nil, func(f *exitFixture) []string { return []string{"check", f.noDB, f.diffDst} }},
		{"check", "server down", failed, nil, func(f *exitFixture) []string { return []string{"check", f.diffSrc, f.down} }},
		{"check", "access denied", failed, nil, func(f *exitFixture) []string { return []string{"check", f.denied, f.diffDst} }},
		{"readiness", "not ready", differs, nil, func(f *exitFixture) []string {
			return []string{"readiness", f.diffSrc, f.diffDst, "--store", f.store}
		}},
		{"capture", "ok", ok, nil, func(f *exitFixture) []string {
			return []string{"capture", f.slowLog, "-o", filepath.Join(f.dir, "ok.capture")}
		}},
		{"capture", "unknown format", usage, nil, func(f *exitFixture) []string {
			return []string{"capture", f.garbage, "-o", filepath.Join(f.dir, "no.capture")}
		}},
		{"capture", "no statement read", usage, nil, func(f *exitFixture) []string {
			return []string{"capture", f.emptyLog, "-o", filepath.Join(f.dir, "empty.capture")}
		}},
		{"capture", "no such file", usage, nil, func(f *exitFixture) []string {
			return []string{"capture", filepath.Join(f.dir, "nope.log"), "-o", filepath.Join(f.dir, "no.capture")}
		}},
		{"replay", "differences", differs, nil, func(f *exitFixture) []string {
			return []string{"replay", f.capture, "--control", f.diffSrc, "--candidate", f.diffDst}
		}},
		{"replay", "no such capture", usage, nil, func(f *exitFixture) []string {
			return []string{"replay", filepath.Join(f.dir, "nope.capture"), "--control", f.diffSrc, "--candidate", f.diffDst}
		}},
		{"replay", "no such database", usage, nil, func(f *exitFixture) []string {
			return []string{"replay", f.capture, "--control", f.diffSrc, "--candidate", f.noDB}
		}},
		{"replay", "server down", failed, nil, func(f *exitFixture) []string {
			return []string{"replay", f.capture, "--control", f.diffSrc, "--candidate", f.down}
		}},
		{"baseline", "ok", ok, nil, func(f *exitFixture) []string {
			return []string{"baseline", "save", "first", "--store", f.store, "--runs", "all"}
		}},
		{"baseline", "no such baseline", usage, nil, func(f *exitFixture) []string {
			return []string{"baseline", "delete", "nope", "--store", f.store}
		}},
		{"baseline", "unknown subcommand", usage, nil, func(f *exitFixture) []string { return []string{"baseline", "sav", "x"} }},
		{"baseline", "no such store", usage, nil, func(f *exitFixture) []string {
			return []string{"baseline", "list", "--store", filepath.Join(f.dir, "nope.db")}
		}},
		{"rehearse", "not ready", differs, nil, func(f *exitFixture) []string {
			return []string{"rehearse", f.rehearsal, "--store", filepath.Join(f.dir, "rehearse.db"), "--pages", f.dir}
		}},
		{"rehearse", "bad plan", usage, nil, func(f *exitFixture) []string { return []string{"rehearse", f.badPlan, "--store", f.store} }},
		{"rehearse", "server down", failed, nil, func(f *exitFixture) []string {
			return []string{"rehearse", f.downRehears, "--store", filepath.Join(f.dir, "rehearse.db"), "--pages", f.dir}
		}},
		{"readiness", "one side", usage, nil, func(f *exitFixture) []string { return []string{"readiness", f.diffSrc} }},

		// An output that cannot be written is the tool's failure (exit 1),
		// found before anything is read or measured: the commands that
		// connect are pointed at a server that is down, so that only a
		// check made before connecting can name the output.
		{"run", "unwritable --json", failed, nil, func(f *exitFixture) []string {
			return []string{"run", "ping", "--target", f.down, "--time", "1", "--json", f.unwritable()}
		}},
		{"run", "unwritable --store", failed, nil, func(f *exitFixture) []string {
			return []string{"run", "ping", "--target", f.down, "--time", "1", "--store", f.unwritable()}
		}},
		{"slap", "unwritable --csv", failed, nil, func(f *exitFixture) []string {
			return []string{"slap", "--target", f.down, "--query=select 1", "--concurrency=1", "--iterations=1", "--csv=" + f.unwritable()}
		}},
		{"slap", "unwritable --store", failed, nil, func(f *exitFixture) []string {
			return []string{"slap", "--target", f.down, "--query=select 1", "--concurrency=1", "--iterations=1", "--store", f.unwritable()}
		}},
		{"sweep", "unwritable --store", failed, nil, func(f *exitFixture) []string {
			return []string{"sweep", f.plan, "--store", f.unwritable()}
		}},
		{"verify", "unwritable --fix-sql", failed, nil, func(f *exitFixture) []string {
			return []string{"verify", f.down, f.down, "--fix-sql", f.unwritable()}
		}},
		{"verify", "unwritable --store", failed, nil, func(f *exitFixture) []string {
			return []string{"verify", f.down, f.down, "--store", f.unwritable()}
		}},
		{"check", "unwritable --html", failed, nil, func(f *exitFixture) []string {
			return []string{"check", f.down, f.down, "--html", f.unwritable()}
		}},
		{"check", "unwritable --store", failed, nil, func(f *exitFixture) []string {
			return []string{"check", f.down, f.down, "--store", f.unwritable()}
		}},
		{"replay", "unwritable --json", failed, nil, func(f *exitFixture) []string {
			return []string{"replay", f.capture, "--control", f.down, "--candidate", f.down, "--json", f.unwritable()}
		}},
		{"replay", "unwritable --store", failed, nil, func(f *exitFixture) []string {
			return []string{"replay", f.capture, "--control", f.down, "--candidate", f.down, "--store", f.unwritable()}
		}},
		{"vars", "bisect: unwritable --json", failed, nil, func(f *exitFixture) []string {
			return []string{"vars", "bisect", f.down, f.down, "--workload", "oltp_point_select", "--threads", "1", "--json", f.unwritable()}
		}},
		{"vars", "bisect: unwritable --html", failed, nil, func(f *exitFixture) []string {
			return []string{"vars", "bisect", f.down, f.down, "--workload", "oltp_point_select", "--threads", "1", "--html", f.unwritable()}
		}},
		{"vars", "bisect: unwritable --undo", failed, nil, func(f *exitFixture) []string {
			return []string{"vars", "bisect", f.down, f.down, "--workload", "oltp_point_select", "--threads", "1", "--allow-set-global", "--undo", f.unwritable()}
		}},
		{"capture", "unwritable -o", failed, nil, func(f *exitFixture) []string {
			return []string{"capture", f.slowLog, "-o", f.unwritable()}
		}},
		{"capture", "unwritable --to-workload", failed, nil, func(f *exitFixture) []string {
			return []string{"capture", f.slowLog, "--to-workload", f.unwritable()}
		}},
		{"report", "unwritable -o", failed, nil, func(f *exitFixture) []string {
			return []string{"report", "--store", f.store, "--runs", "all", "-o", f.unwritable()}
		}},
		{"readiness", "unwritable -o", failed, nil, func(f *exitFixture) []string {
			return []string{"readiness", f.diffSrc, f.diffDst, "--store", f.store, "-o", f.unwritable()}
		}},
		{"demo", "unwritable --out", failed, nil, func(f *exitFixture) []string { return []string{"demo", "--out", f.unwritable()} }},
	}
	covered := map[string]bool{}
	for _, tc := range cases {
		covered[tc.cmd] = true
		t.Run(tc.cmd+"/"+tc.kind, func(t *testing.T) {
			want := codes[tc.meaning]
			code, out, errOut := runCLIEnv(context.Background(), tc.env, tc.args(f)...)
			if code != want {
				t.Errorf("exit code: got %d, want %d (%s)\nstdout: %s\nstderr: %s", code, want, tc.meaning, out, errOut)
			}
			if code != 0 && code != codes[differs] && strings.TrimSpace(errOut) == "" {
				t.Errorf("exit %d with nothing on stderr: a failure must say what failed", code)
			}
			if strings.HasPrefix(tc.kind, "unwritable") && !strings.Contains(errOut, f.unwritable()) {
				t.Errorf("stderr: got %q, want it to name the output %s before anything else fails", errOut, f.unwritable())
			}
		})
	}
	for name := range commands() {
		if !covered[name] {
			t.Errorf("command %s has no row in TestExitCodes", name)
		}
	}
}
