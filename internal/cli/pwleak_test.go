package cli

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/browsertest"
	"github.com/shakedown/shakedown/internal/render"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

// The password of the user TestNoPasswordInOutputs makes, as it is and as
// a URL holds it: distinctive, so that a copy of either in an output is
// found, and with characters a URL must encode, so that a copy of the URL
// as given is told from one decoded.
const (
	leakPassword = "Pw/Canary#7731"
	leakEncoded  = "Pw%2FCanary%237731"
	leakMark     = "Canary" // in both forms
)

// userinfoRE is a URL's user:password@, whatever the user and password.
var userinfoRE = regexp.MustCompile(`//[^/@\s"'<>]+:[^/@\s"'<>]*@`)

// TestNoPasswordInOutputs runs every command that renders a target for
// people (every HTML page, the text, markdown, CSV and JSON outputs, the
// store's rows) with target URLs that hold a password, and finds neither
// the password nor a user:password@ in any of them: not in a file written,
// not on stdout or stderr, not in the store's bytes.
func TestNoPasswordInOutputs(t *testing.T) {
	ctx := context.Background()
	srcURL, dstURL, src, dst := verifyDBs(t, "pwleak")
	vfyExec(t, src, "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1)")
	vfyExec(t, dst, "CREATE TABLE t (id INT PRIMARY KEY)", "INSERT INTO t VALUES (1), (2)")

	// A user with a password, on the shared server, for this test alone.
	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := tg.OpenNoDB(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	const drop = "DROP USER IF EXISTS 'pwcanary'@'127.0.0.1'"
	vfyExec(t, admin, drop, "CREATE USER 'pwcanary'@'127.0.0.1' IDENTIFIED BY '"+leakPassword+"'",
		"GRANT ALL ON *.* TO 'pwcanary'@'127.0.0.1'")
	t.Cleanup(func() { admin.Exec(drop) })
	withPW := func(u string) string {
		return strings.Replace(u, "//"+tg.User+"@", "//pwcanary:"+leakEncoded+"@", 1)
	}
	withUser := func(u string) string { return strings.Replace(u, "//"+tg.User+"@", "//pwcanary@", 1) }
	srcPW, dstPW := withPW(srcURL), withPW(dstURL)
	server := strings.TrimSuffix(srcPW, "/pwleak_src")
	if !strings.Contains(srcPW, leakEncoded) || server == srcPW {
		t.Fatalf("got URLs %q and %q, want the password in them and a database to drop", srcPW, server)
	}

	// Inputs hold the password: they live apart from the outputs searched.
	in, out := t.TempDir(), t.TempDir()
	o := func(name string) string { return filepath.Join(out, name) }
	write := fileWriter(t, in)
	// A plan refuses a URL with a password: its targets name a variable
	// that holds it.
	plan := write("plan.yaml", fmt.Sprintf("targets:\n  - name: src\n    url: %s\n    password_env: PWLEAK\n    role: control\n"+
		"  - name: dst\n    url: %s\n    password_env: PWLEAK\nworkloads: [ping]\nthreads: [1]\ntime: 1\n", withUser(srcURL), withUser(dstURL)))
	slowLog := write("slow.log", "# Time: 261122 21:56:55\n# User@Host: a[a] @  [127.0.0.1]\n# Thread_id: 4  Schema: pwleak_src  QC_hit: No\n"+
		"# Query_time: 0.1  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 1\nSET timestamp=1;\nSELECT COUNT(*) FROM t;\n")
	capFile := filepath.Join(in, "slow.capture")
	if code, _, errOut := runCLI(ctx, "capture", slowLog, "-o", capFile); code != ExitOK {
		t.Fatalf("capture the slow log: exit %d: %s", code, errOut)
	}
	rehearsal := write("rehearsal.yaml", fmt.Sprintf("source: {name: src, url: %q, password_env: PWLEAK}\n"+
		"candidates: [{name: dst, url: %q, password_env: PWLEAK}]\nreplay: {capture: slow.capture}\n"+
		"sweep: {workloads: [ping], threads: [1], time: 1}\nsteps: {check: {continue_on_failure: true}, verify: {continue_on_failure: true}}\n",
		withUser(srcURL), withUser(dstURL)))

	st := o("store.db")
	// A store on a server, its password in its URL, as --store takes it.
	// The empty one makes the commands say what it lacks.
	mst, empty := server+"/pwleak_store", server+"/pwleak_empty"
	t.Cleanup(func() {
		admin.Exec("DROP DATABASE IF EXISTS pwleak_store")
		admin.Exec("DROP DATABASE IF EXISTS pwleak_empty")
	})
	type step struct {
		name string
		code int // the exit status it must end with
		args []string
	}
	steps := []step{
		{"run", ExitOK, []string{"run", "ping", "--target", srcPW, "--time", "1", "--store", st, "--json", o("run.json")}},
		{"sweep", ExitOK, []string{"sweep", plan, "--store", st}},
		{"verify", ExitDifferences, []string{"verify", srcPW, dstPW, "--html", o("verify.html"), "--json", o("verify.json"), "--fix-sql", o("fix.sql"), "--store", st}},
		{"check", ExitDifferences, []string{"check", srcPW, dstPW, "--html", o("check.html"), "--json", o("check.json"), "--store", st}},
		{"replay", ExitDifferences, []string{"replay", capFile, "--control", srcPW, "--candidate", dstPW, "--progress", "0",
			"--html", o("replay.html"), "--json", o("replay.json"), "--store", st}},
		{"vars diff", ExitOK, []string{"vars", "diff", server + "/", dstPW, "--all"}},
		{"vars diff --json", ExitOK, []string{"vars", "diff", server + "/", dstPW, "--json"}},
		{"vars bisect", ExitOK, []string{"vars", "bisect", srcPW, dstPW, "--workload", "ping", "--threads", "1", "--time", "1",
			"--allow-set-global", "--undo", o("undo.json"), "--json", o("bisect.json"), "--html", o("bisect.html")}},
		{"watch", ExitOK, []string{"watch", server + "/", "--count", "1", "--interval", "100ms"}},
		{"watch --json", ExitOK, []string{"watch", server + "/", "--count", "1", "--interval", "100ms", "--json"}},
		{"slap", ExitOK, []string{"slap", "--target", srcPW, "--create-schema=pwleak_src", "--query=select 1", "--concurrency=1", "--iterations=1"}},
		{"analyze", ExitOK, []string{"analyze", srcPW}},
		// The shared server logs to no table: capture names its source in
		// saying that it read nothing.
		{"capture of the general log table", ExitUsage, []string{"capture", server + "/mysql", "-o", o("general.capture"), "--summary"}},
		{"report --list", ExitOK, []string{"report", "--list", "--store", st}},
		{"report --runs", ExitOK, []string{"report", "--store", st, "--runs", "all", "-o", o("runs.html")}},
		{"report result file", ExitOK, []string{"report", o("run.json"), "-o", o("runfile.md")}},
		{"report --history", ExitOK, []string{"report", "--store", st, "--history", "-o", o("history.html")}},
		{"report --bisect", ExitOK, []string{"report", "--store", st, "--bisect", o("bisect.json"), "-o", o("bisect-report.html")}},
		{"readiness", ExitDifferences, []string{"readiness", srcPW, dstPW, "--store", st}},
		{"rehearse", ExitDifferences, []string{"rehearse", rehearsal, "--store", st, "--pages", out}},
		{"rehearse --json", ExitDifferences, []string{"rehearse", rehearsal, "--store", st, "--pages", out, "--json"}},

		{"run, MySQL store", ExitOK, []string{"run", "ping", "--target", srcPW, "--time", "1", "--store", mst}},
		{"sweep, MySQL store", ExitOK, []string{"sweep", plan, "--store", mst}},
		{"verify, MySQL store", ExitDifferences, []string{"verify", srcPW, dstPW, "--store", mst}},
		{"check, MySQL store", ExitDifferences, []string{"check", srcPW, dstPW, "--store", mst}},
		{"replay, MySQL store", ExitDifferences, []string{"replay", capFile, "--control", srcPW, "--candidate", dstPW, "--progress", "0", "--store", mst}},
		{"report --list, MySQL store", ExitOK, []string{"report", "--list", "--store", mst}},
		{"report, MySQL store", ExitOK, []string{"report", "--store", mst, "-o", o("mstore-report.html")}},
		{"readiness, MySQL store", ExitDifferences, []string{"readiness", srcPW, dstPW, "--store", mst}},
		{"rehearse, MySQL store", ExitDifferences, []string{"rehearse", rehearsal, "--store", mst, "--pages", out}},
		{"readiness html, MySQL store", ExitDifferences, []string{"readiness", srcPW, dstPW, "--store", mst, "-o", o("mstore-readiness.html")}},
		{"readiness md, MySQL store", ExitDifferences, []string{"readiness", srcPW, dstPW, "--store", mst, "-o", o("mstore-readiness.md")}},
		{"baseline save, MySQL store", ExitOK, []string{"baseline", "save", "pw", "--store", mst}},
		{"baseline list, MySQL store", ExitOK, []string{"baseline", "list", "--store", mst}},
		{"report --runs, MySQL store", ExitOK, []string{"report", "--store", mst, "--runs", "all", "-o", o("mstore-runs.html")}},
		{"report --history, MySQL store", ExitOK, []string{"report", "--store", mst, "--history", "-o", o("mstore-history.html")}},
		{"report --runs json, MySQL store", ExitOK, []string{"report", "--store", mst, "--runs", "all", "-o", o("mstore-runs.json")}},
		{"report --history json, MySQL store", ExitOK, []string{"report", "--store", mst, "--history", "-o", o("mstore-history.json")}},

		{"readiness, empty MySQL store", ExitDifferences, []string{"readiness", srcPW, dstPW, "--store", empty}},
		{"readiness html, empty MySQL store", ExitDifferences, []string{"readiness", srcPW, dstPW, "--store", empty, "-o", o("empty-readiness.html")}},
		{"baseline list, empty MySQL store", ExitOK, []string{"baseline", "list", "--store", empty}},
		{"baseline save, empty MySQL store", ExitUsage, []string{"baseline", "save", "pw", "--store", empty, "--runs", "7"}},
		{"report --list, empty MySQL store", ExitOK, []string{"report", "--list", "--store", empty}},
		{"report, empty MySQL store", ExitUsage, []string{"report", "--store", empty}},
		{"report --runs, empty MySQL store", ExitUsage, []string{"report", "--store", empty, "--runs", "all"}},
		{"report --history, empty MySQL store", ExitUsage, []string{"report", "--store", empty, "--history"}},
		{"sweep --resume, empty MySQL store", ExitUsage, []string{"sweep", "--resume", "--store", empty}},
		{"sweep --resume 7, empty MySQL store", ExitUsage, []string{"sweep", "--resume", "7", "--store", empty}},
	}
	for _, ext := range []string{"txt", "md", "csv", "json", "html"} {
		steps = append(steps, step{"report ." + ext, ExitOK, []string{"report", "--store", st, "-o", o("report." + ext)}})
		if ext != "csv" {
			steps = append(steps, step{"readiness ." + ext, ExitDifferences, []string{"readiness", srcPW, dstPW, "--store", st, "-o", o("readiness." + ext)}})
		}
	}
	for _, s := range steps {
		code, stdout, stderr := runCLIEnv(ctx, map[string]string{"PWLEAK": leakPassword}, s.args...)
		if code != s.code {
			t.Errorf("%s: got exit %d, want %d\nstdout:\n%s\nstderr:\n%s", s.name, code, s.code, stdout, stderr)
		}
		for what, text := range map[string]string{"stdout": stdout, "stderr": stderr} {
			if leak := findLeak(text); leak != "" {
				t.Errorf("%s: %s holds %q:\n%s", s.name, what, leak, text)
			}
		}
	}

	// The store on the server: every value of every row.
	rows, err := admin.QueryContext(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'pwleak_store'")
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Close(); err != nil || len(tables) == 0 {
		t.Fatalf("got tables %v (%v) in the MySQL store, want some", tables, err)
	}
	for _, table := range tables {
		var dump strings.Builder
		vfyDump(t, admin, "SELECT * FROM pwleak_store."+table, &dump)
		if leak := findLeak(dump.String()); leak != "" {
			t.Errorf("MySQL store, table %s: holds %q in\n%s", table, leak, dump.String())
		}
	}

	pages := 0
	var html []string
	err = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "<html") {
			pages++
			html = append(html, path)
			// Every page is framed by render: its one stylesheet, once.
			if n := strings.Count(string(b), render.Stylesheet); n != 1 || strings.Count(string(b), "<style") != 1 {
				t.Errorf("%s: got render's stylesheet %d times among %d <style> blocks, want the page framed by render.Write", filepath.Base(path), n, strings.Count(string(b), "<style"))
			}
		}
		if leak := findLeak(string(b)); leak != "" {
			t.Errorf("%s holds %q", filepath.Base(path), leak)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// verify, check, replay, bisect, report (sweep, runs, history, with a
	// bisect; from the MySQL store, the runs and history too), readiness
	// (from each store) and the rehearsal's page (one file, written by each
	// rehearsal).
	if want := 15; pages != want {
		t.Errorf("got %d HTML pages written, want %d", pages, want)
	}
	// Each page as a browser shows it, after its scripts ran: it renders
	// without a console message, shows something, and shows no password.
	browsertest.Need(t)
	tags := regexp.MustCompile(`(?s)<style.*?</style>|<script.*?</script>|<[^>]+>`)
	for _, page := range html {
		dom := browsertest.DOM(t, "file://"+page)
		if leak := findLeak(dom); leak != "" {
			t.Errorf("%s in Chromium: holds %q", filepath.Base(page), leak)
		}
		if text := strings.TrimSpace(tags.ReplaceAllString(dom, "")); len(text) < 20 {
			t.Errorf("%s in Chromium: got text %q, want the page's content", filepath.Base(page), text)
		}
	}
}

// findLeak returns the password or a user:password@ that text holds, or "".
func findLeak(text string) string {
	if i := strings.Index(text, leakMark); i >= 0 {
		return text[max(0, i-10):min(len(text), i+len(leakMark)+10)]
	}
	return userinfoRE.FindString(text)
}

// vfyDump writes every value query returns to w, one per line.
func vfyDump(t *testing.T, db *sql.DB, query string, w io.Writer) {
	t.Helper()
	rows, err := db.Query(query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	vals := make([]sql.RawBytes, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			fmt.Fprintf(w, "%s\n", v)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// TestPublicArgs: the command line a run stores keeps no password: not the
// target's, not a store's on a server.
func TestPublicArgs(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"target dropped", []string{"run", "ping", "--target", "mysql://u:pw@h:1/d", "--time", "1"}, "run ping --time 1"},
		{"target= dropped", []string{"run", "ping", "--target=mysql://u:pw@h:1/d"}, "run ping"},
		{"password dropped", []string{"run", "ping", "--mysql_password", "pw", "--mysql-password=pw"}, "run ping"},
		{"sqlite store kept", []string{"run", "ping", "--store", "runs.db"}, "run ping --store runs.db"},
		{"server store redacted", []string{"run", "ping", "--store", "mysql://u:pw@h:1/r"}, "run ping --store mysql://u@h:1/r"},
		{"server store= redacted", []string{"run", "ping", "--store=mysql://u:pw@h:1/r"}, "run ping --store=mysql://u@h:1/r"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := strings.Join(bench.PublicArgs(c.args), " "); got != c.want {
				t.Errorf("PublicArgs(%q): got %q, want %q", c.args, got, c.want)
			}
		})
	}
}
