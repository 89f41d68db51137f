package cli

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/capture"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// The statements of the scripted application whose results a setting of the
// candidate changes; every other read gives the same result everywhere.
const (
	stmtDivision   = "SELECT total / 3 FROM orders WHERE id = 5"
	stmtGroupBy    = "SELECT customer, name FROM orders WHERE id < 50 GROUP BY customer ORDER BY customer"
	stmtCollation  = "SELECT COUNT(*) FROM orders WHERE name = 'alice'"
	stmtByCustomer = "SELECT COUNT(*), SUM(total) FROM orders WHERE customer = ?"
	appPassword    = "s3cret-app-pw"
)

// shopSchema creates database db with orders (100,000 rows, 20 a customer)
// and audit; the name column's collation and the customer index are the
// knobs. Without the index a statement by customer scans every row, about
// 40 times slower: a regression far above the delays a busy machine adds
// to other statements.
func shopSchema(db, nameCollation string, customerIndex bool) []string {
	idx := ""
	if customerIndex {
		idx = ", KEY customer (customer)"
	}
	return []string{
		"DROP DATABASE IF EXISTS " + db,
		"CREATE DATABASE " + db,
		"CREATE TABLE " + db + ".orders (id INT PRIMARY KEY, customer INT NOT NULL, name VARCHAR(20) COLLATE " + nameCollation +
			" NOT NULL, total DECIMAL(10,2) NOT NULL" + idx + ") ENGINE=InnoDB",
		"INSERT INTO " + db + ".orders SELECT seq, seq % 5000, CASE WHEN seq = 7 THEN 'Alice' WHEN seq = 8 THEN 'alice' ELSE CONCAT('n', seq % 37) END, seq * 1.25 FROM " + db + ".seq_1_to_100000",
		"CREATE TABLE " + db + ".audit (id INT AUTO_INCREMENT PRIMARY KEY, note VARCHAR(50))",
	}
}

func execAll(t *testing.T, ctx context.Context, dsn string, stmts []string) {
	t.Helper()
	db, err := sql.Open("mysql", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

func dsnOf(port int, db string) string {
	c := mysql.NewConfig()
	c.User, c.Net, c.Addr, c.DBName = "shakedown", "tcp", fmt.Sprintf("127.0.0.1:%d", port), db
	return c.FormatDSN()
}

// runApp is the scripted application: one session of reads, writes and
// prepared statements (go-sql-driver prepares on the server), and a second
// short session.
func runApp(t *testing.T, ctx context.Context, port int) {
	t.Helper()
	db, err := sql.Open("mysql", dsnOf(port, "shop"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	do := func(q string, args ...any) {
		rows, err := c.QueryContext(ctx, q, args...)
		if err != nil {
			if strings.Contains(q, "nosuchtable") {
				return
			}
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
		}
		rows.Close()
	}
	do("SET @bonus = 2")
	for i := 1; i <= 10; i++ {
		do("SELECT id, customer, total FROM orders WHERE id = ?", i*13)
	}
	for i := 0; i < 40; i++ {
		do(stmtByCustomer, i*7)
	}
	for i := 0; i < 3; i++ {
		do(stmtDivision)
	}
	do(stmtGroupBy)
	do(stmtCollation)
	do("SELECT id, total FROM orders WHERE id BETWEEN 100 AND 110 ORDER BY id DESC LIMIT 5")
	do("SELECT customer, COUNT(*) FROM orders WHERE id <= 300 GROUP BY customer")
	do("SELECT @bonus + id FROM orders WHERE id = 2")
	do("SELECT NOW(), id FROM orders WHERE id = 1")
	do("SELECT * FROM nosuchtable")
	do("INSERT INTO audit (note) VALUES ('paid')")
	do("UPDATE audit SET note = ? WHERE id = ?", "refunded", 1)
	do("CREATE USER IF NOT EXISTS app2@'127.0.0.1' IDENTIFIED BY '" + appPassword + "'")
	do("SHOW TABLES")
	c.Close()

	c2, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	for i := 1; i <= 3; i++ {
		rows, err := c2.QueryContext(ctx, "SELECT name FROM orders WHERE id = ?", 100+i)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
		}
		rows.Close()
	}
}

// startTcpdump captures loopback traffic to port into a pcap until the
// returned stop is called.
func startTcpdump(t *testing.T, port int, path string) func() {
	t.Helper()
	bin, err := exec.LookPath("tcpdump")
	if err != nil {
		t.Fatalf("tcpdump not found: %v (scripts/deps.sh installs it)", err)
	}
	cmd := exec.Command(bin, "-i", "lo", "--immediate-mode", "-B", "65536", "-U", "-s", "0", "-w", path, fmt.Sprintf("tcp port %d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start tcpdump: %v", err)
	}
	listening := make(chan string, 1)
	ended := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var all []string
		for sc.Scan() {
			all = append(all, sc.Text())
			if strings.Contains(sc.Text(), "listening on") {
				listening <- ""
			}
		}
		msg := strings.Join(all, "\n")
		select {
		case listening <- msg:
		default:
		}
		ended <- msg
	}()
	select {
	case msg := <-listening:
		if msg != "" {
			t.Fatalf("tcpdump could not capture on loopback: %s", msg)
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("tcpdump did not start listening within 20s")
	}
	return func() {
		// Packets still in the kernel's buffer are lost at the signal: wait
		// until the file stops growing first.
		last, stable := int64(-1), 0
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && stable < 3; {
			time.Sleep(100 * time.Millisecond)
			fi, err := os.Stat(path)
			if err == nil && fi.Size() == last && last > 24 {
				stable++
			} else if err == nil {
				last, stable = fi.Size(), 0
			}
		}
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
			t.Logf("tcpdump: %s", <-ended)
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			t.Error("tcpdump did not stop within 20s")
		}
	}
}

func serverVar(t *testing.T, ctx context.Context, port int, name string) string {
	t.Helper()
	db, err := sql.Open("mysql", dsnOf(port, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v string
	if err := db.QueryRowContext(ctx, "SELECT @@"+name).Scan(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

// replayJSON runs replay and reads its JSON report.
type replayDoc struct {
	Statements  int64 `json:"statements"`
	Differences int64 `json:"differences"`
	NewErrors   int64 `json:"new_errors"`
	NonDet      int64 `json:"nondeterministic"`
	Skipped     struct {
		Total   int64            `json:"total"`
		Reasons map[string]int64 `json:"reasons"`
	} `json:"skipped"`
	Fingerprints []struct {
		Fingerprint string `json:"fingerprint"`
		Example     string `json:"example"`
		Count       int64  `json:"count"`
		Differences int64  `json:"differences"`
		Control     struct {
			P50 float64 `json:"p50_ms"`
		} `json:"control"`
		Candidates []struct {
			Ratio   float64 `json:"latency_ratio"`
			Verdict string  `json:"verdict"`
		} `json:"candidates"`
	} `json:"fingerprints"`
}

func replayJSON(t *testing.T, ctx context.Context, capFile string, args ...string) (int, replayDoc, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "replay.json")
	code, stdout, stderr := runCLI(ctx, append([]string{"replay", capFile, "--json", out, "--progress", "0"}, args...)...)
	if code != ExitOK && code != ExitDifferences {
		t.Fatalf("replay %v: exit %d\n%s\n%s", args, code, stdout, stderr)
	}
	var doc replayDoc
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return code, doc, stdout
}

// differing returns the example statements of the fingerprints that
// differ, sorted.
func differing(doc replayDoc) []string {
	var out []string
	for _, f := range doc.Fingerprints {
		if f.Differences > 0 {
			out = append(out, f.Example)
		}
	}
	sort.Strings(out)
	return out
}

func TestCaptureAndReplayScriptedApplication(t *testing.T) {
	// The three servers start at once, as the wait is mostly each one's
	// bootstrap; div is the candidate of the pt-upgrade comparison.
	insts := sandboxtest.StartAll(t, []string{"general_log=1", "slow_query_log=1", "long_query_time=0", "log_output=FILE,TABLE"},
		nil, []string{"div_precision_increment=8"})
	ctl, cand, div := insts[0], insts[1], insts[2]
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	execAll(t, ctx, dsnOf(ctl.Port, ""), append(shopSchema("shop", "utf8mb4_bin", true), shopSchema("shop_noidx", "utf8mb4_bin", false)...))
	execAll(t, ctx, dsnOf(cand.Port, ""), append(shopSchema("shop", "utf8mb4_bin", true), shopSchema("shop_ci", "utf8mb4_general_ci", true)...))
	generalLog := serverVar(t, ctx, ctl.Port, "general_log_file")
	slowLog := serverVar(t, ctx, ctl.Port, "slow_query_log_file")
	datadir := serverVar(t, ctx, ctl.Port, "datadir")
	if !filepath.IsAbs(generalLog) {
		generalLog = filepath.Join(datadir, generalLog)
		slowLog = filepath.Join(datadir, slowLog)
	}
	execAll(t, ctx, dsnOf(ctl.Port, ""), []string{"SET GLOBAL general_log = 0", "TRUNCATE mysql.general_log", "SET GLOBAL general_log = 1"})
	gStart, sStart := fileSize(t, generalLog), fileSize(t, slowLog)

	dir := t.TempDir()
	pcap := filepath.Join(dir, "app.pcap")
	stop := startTcpdump(t, ctl.Port, pcap)
	runApp(t, ctx, ctl.Port)
	stop()
	execAll(t, ctx, dsnOf(ctl.Port, ""), []string{"SET GLOBAL general_log = 0"})

	// Only the application's part of each log.
	general := tailFile(t, generalLog, gStart, filepath.Join(dir, "general.log"))
	slow := tailFile(t, slowLog, sStart, filepath.Join(dir, "slow.log"))
	tableURL := fmt.Sprintf("mysql://shakedown@127.0.0.1:%d/mysql", ctl.Port)

	captures := map[string]string{}
	for _, src := range []struct{ name, arg string }{{"general", general}, {"slow", slow}, {"pcap", pcap}, {"table", tableURL}} {
		out := filepath.Join(dir, src.name+".capture")
		args := []string{"capture", src.arg, "-o", out}
		if src.name == "pcap" {
			args = append(args, "--port", fmt.Sprint(ctl.Port))
		}
		code, stdout, stderr := runCLI(ctx, args...)
		if code != ExitOK {
			t.Fatalf("capture %s: exit %d\n%s\n%s", src.name, code, stdout, stderr)
		}
		captures[src.name] = out
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), appPassword) {
			t.Errorf("capture %s: the password is in the capture file", src.name)
		}
		recs := readCapture(t, out)
		byCustomer, prepared := 0, 0
		for _, r := range recs {
			if strings.HasPrefix(r.SQL, "SELECT COUNT(*), SUM(total) FROM orders WHERE customer = ") {
				byCustomer++
			}
			if r.Prepared && len(r.Params) == 1 {
				prepared++
			}
		}
		if byCustomer != 40 {
			t.Errorf("capture %s: got %d statements by customer, want 40", src.name, byCustomer)
		}
		if src.name == "pcap" && prepared < 50 {
			t.Errorf("capture pcap: got %d prepared statements with their parameter, want >= 50", prepared)
		}
	}

	ctlURL := fmt.Sprintf("mysql://shakedown@127.0.0.1:%d/shop", ctl.Port)
	candURL := fmt.Sprintf("mysql://shakedown@127.0.0.1:%d/shop", cand.Port)
	// A candidate that differs in one setting: the candidate's server gets
	// it globally for one case (new sessions take it) and back after.
	const sqlMode = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_AUTO_CREATE_USER,NO_ENGINE_SUBSTITUTION"
	var origMode string
	origDB, err := sql.Open("mysql", dsnOf(cand.Port, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer origDB.Close()
	if err := origDB.QueryRowContext(ctx, "SELECT @@GLOBAL.sql_mode").Scan(&origMode); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		candidate string
		set       []string // on the candidate's server for this case
		restore   []string
		want      []string // the statements that differ
	}{
		{"identical", candURL, nil, nil, nil},
		{"div_precision_increment", candURL, []string{"SET GLOBAL div_precision_increment = 8"}, []string{"SET GLOBAL div_precision_increment = DEFAULT"}, []string{stmtDivision}},
		{"ONLY_FULL_GROUP_BY", candURL, []string{"SET GLOBAL sql_mode = '" + sqlMode + "'"}, []string{"SET GLOBAL sql_mode = '" + origMode + "'"}, []string{stmtGroupBy}},
		{"collation", fmt.Sprintf("mysql://shakedown@127.0.0.1:%d/shop_ci", cand.Port), nil, nil, []string{stmtCollation}},
	}
	for _, src := range []string{"general", "slow", "pcap", "table"} {
		for _, tc := range tests {
			t.Run(src+"/"+tc.name, func(t *testing.T) {
				execAll(t, ctx, dsnOf(cand.Port, ""), tc.set)
				defer execAll(t, ctx, dsnOf(cand.Port, ""), tc.restore)
				code, doc, stdout := replayJSON(t, ctx, captures[src], "--control", ctlURL, "--candidate", tc.candidate)
				wantCode := ExitOK
				if len(tc.want) > 0 {
					wantCode = ExitDifferences
				}
				if code != wantCode {
					t.Errorf("got exit %d, want %d\n%s", code, wantCode, stdout)
				}
				if got := differing(doc); strings.Join(got, "|") != strings.Join(tc.want, "|") {
					t.Errorf("differing statements: got %q, want %q\n%s", got, tc.want, stdout)
				}
				if doc.Statements < 55 {
					t.Errorf("statements replayed: got %d, want >= 55", doc.Statements)
				}
				if doc.Skipped.Reasons["INSERT"] != 1 || doc.Skipped.Reasons["UPDATE"] != 1 {
					t.Errorf("skipped: got %v, want INSERT 1 and UPDATE 1 among them", doc.Skipped.Reasons)
				}
				if tc.name == "ONLY_FULL_GROUP_BY" && doc.NewErrors != 1 {
					t.Errorf("new errors: got %d, want 1", doc.NewErrors)
				}
			})
		}
	}

	t.Run("stored for readiness", func(t *testing.T) {
		st := filepath.Join(t.TempDir(), "evidence.db")
		code, stdout, stderr := runCLI(ctx, "replay", captures["general"], "--control", ctlURL, "--candidate", candURL, "--progress", "0", "--store="+st)
		if code != ExitOK {
			t.Fatalf("replay --store: exit %d\n%s\n%s", code, stdout, stderr)
		}
		code, stdout, stderr = runCLI(ctx, "readiness", ctlURL, candURL, "--store", st)
		if !strings.Contains(stdout, "statements replayed: 0 differing, 0 new errors") {
			t.Errorf("readiness (exit %d): got\n%s\n%s\nwant the replay's evidence", code, stdout, stderr)
		}
	})

	t.Run("missing index", func(t *testing.T) {
		noidx := fmt.Sprintf("mysql://shakedown@127.0.0.1:%d/shop_noidx", ctl.Port)
		// One statement at a time: with every session's full scans
		// running beside it, a busy 2-core machine made the control's
		// indexed statements wait for CPU as long as the scans took.
		_, doc, stdout := replayJSON(t, ctx, captures["pcap"], "--control", ctlURL, "--candidate", noidx, "--concurrency", "1")
		// The statement by customer is the regression, and the first
		// listed. On a quiet machine it is the only one called slower
		// (the README's run); with the CPU taken by other work, the
		// candidate's scans also slow the statements that follow them on
		// the same core, by far less: any other fingerprint called slower
		// must be at most a third as slow.
		const byCustomer = "SELECT COUNT(*), SUM(total) FROM orders WHERE customer = "
		fps := doc.Fingerprints
		for _, f := range fps {
			if strings.HasPrefix(f.Example, byCustomer) && f.Candidates[0].Verdict == "inconclusive" && f.Control.P50 > 0.5 {
				// Indexed, it takes about 0.1 ms: the machine is too busy
				// to time it, and the verdict is rightly left open.
				t.Skipf("the control's indexed statement took %.2f ms at the median: too busy a machine to time it\n%s", f.Control.P50, stdout)
			}
		}
		if len(fps) == 0 || !strings.HasPrefix(fps[0].Example, byCustomer) || fps[0].Candidates[0].Verdict != "slower" {
			t.Fatalf("first fingerprint: want the one by customer, slower\n%s", stdout)
		}
		top := fps[0].Candidates[0].Ratio
		t.Logf("without the index: %.1fx slower (the control's median %.2f ms)", top, fps[0].Control.P50)
		for _, f := range fps[1:] {
			if c := f.Candidates[0]; c.Verdict == "slower" && c.Ratio > top/3 {
				t.Errorf("%q: slower by %.2fx, near the missing index's %.2fx; want only the statement by customer to regress\n%s", f.Example, c.Ratio, top, stdout)
			}
		}
	})

	t.Run("target dropped mid-replay", func(t *testing.T) {
		capFile := pacedCapture(t, 40)
		done := make(chan struct{})
		var code int
		var stdout, stderr string
		out := filepath.Join(t.TempDir(), "r.json")
		go func() {
			defer close(done)
			code, stdout, stderr = runCLI(ctx, "replay", capFile, "--control", ctlURL, "--candidate", candURL, "--speed", "1", "--json", out, "--progress", "0")
		}()
		killed := killSessions(t, ctx, cand.Port, done)
		<-done
		if killed == 0 {
			t.Fatal("no replay connection to kill on the candidate")
		}
		var doc struct {
			Statements int64 `json:"statements"`
			ConnErrors int64 `json:"connection_errors"`
			Candidates []struct {
				Errors int64 `json:"errors"`
			} `json:"candidates"`
		}
		b, _ := os.ReadFile(out)
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%v: %s\n%s\n%s", err, b, stdout, stderr)
		}
		if doc.Statements != 40 || doc.ConnErrors < 1 || doc.Candidates[0].Errors != doc.ConnErrors {
			t.Errorf("got %d statements, %d on a lost connection, %d candidate errors; want 40, >= 1 and the same\n%s", doc.Statements, doc.ConnErrors, doc.Candidates[0].Errors, stdout)
		}
		if code != ExitDifferences {
			t.Errorf("got exit %d, want %d (the statement lost on the candidate is a new error)", code, ExitDifferences)
		}
	})

	t.Run("interrupted", func(t *testing.T) {
		capFile := pacedCapture(t, 40)
		ictx, icancel := context.WithCancel(ctx)
		out := filepath.Join(t.TempDir(), "r.json")
		var buf, errBuf syncBuffer
		done := make(chan int)
		go func() {
			done <- runCLIWith(ictx, &buf, &errBuf, "replay", capFile, "--control", ctlURL, "--candidate", candURL, "--speed", "1", "--json", out, "--progress", "100ms")
		}()
		for deadline := time.Now().Add(30 * time.Second); !strings.Contains(errBuf.String(), " statements (") || strings.Contains(errBuf.String(), " 0 statements ("); {
			if time.Now().After(deadline) {
				t.Fatalf("no progress within 30s: %s", errBuf.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		icancel()
		code := <-done
		if code != ExitFailure || !strings.Contains(buf.String(), "INTERRUPTED") || !strings.Contains(errBuf.String(), "replay interrupted") {
			t.Errorf("got exit %d\n%s\n%s; want 1, the partial report marked INTERRUPTED", code, buf.String(), errBuf.String())
		}
		var doc struct {
			Interrupted bool  `json:"interrupted"`
			Statements  int64 `json:"statements"`
		}
		b, _ := os.ReadFile(out)
		if err := json.Unmarshal(b, &doc); err != nil || !doc.Interrupted || doc.Statements < 1 || doc.Statements >= 40 {
			t.Errorf("saved report: got %+v (%v), want interrupted with 1-39 statements", doc, err)
		}
	})

	t.Run("pt-upgrade finds the same", func(t *testing.T) {
		bin, err := exec.LookPath("pt-upgrade")
		if err != nil {
			t.Fatalf("pt-upgrade not found: %v (scripts/deps.sh installs percona-toolkit)", err)
		}
		execAll(t, ctx, dsnOf(div.Port, ""), shopSchema("shop", "utf8mb4_bin", true))
		divURL := fmt.Sprintf("mysql://shakedown@127.0.0.1:%d/shop", div.Port)
		_, doc, stdout := replayJSON(t, ctx, captures["general"], "--control", ctlURL, "--candidate", divURL)
		var ours []string
		for _, f := range doc.Fingerprints {
			if f.Differences > 0 {
				ours = append(ours, canonFP(f.Fingerprint))
			}
		}
		cmd := exec.CommandContext(ctx, bin, fmt.Sprintf("h=127.0.0.1,P=%d,u=shakedown,D=shop", ctl.Port),
			fmt.Sprintf("h=127.0.0.1,P=%d,u=shakedown,D=shop", div.Port), "--type", "genlog", general)
		out, _ := cmd.CombinedOutput()
		theirs := ptDiffering(string(out))
		sort.Strings(ours)
		sort.Strings(theirs)
		if len(ours) == 0 || strings.Join(ours, "|") != strings.Join(theirs, "|") {
			t.Errorf("differing fingerprints: replay %q, pt-upgrade %q\n%s\n%s", ours, theirs, stdout, out)
		}
	})

	t.Run("allow writes", func(t *testing.T) {
		code, stdout, stderr := runCLI(ctx, "replay", captures["pcap"], "--control", ctlURL, "--candidate", candURL, "--allow-writes", "--progress", "0")
		if code != ExitOK && code != ExitDifferences {
			t.Fatalf("got exit %d\n%s\n%s", code, stdout, stderr)
		}
		for _, want := range []string{"--allow-writes: 3 statements that may write will run on EVERY target (", "INSERT 1", "UPDATE 1", "CREATE USER 1", "control   control  " + ctlURL, "candidate candidate  " + candURL} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr: want %q in\n%s", want, stderr)
			}
		}
		if !strings.Contains(stdout, "writes allowed") || strings.Contains(stdout, "INSERT 1") {
			t.Errorf("stdout: want the writes run, not skipped\n%s", stdout)
		}
	})

	t.Run("to-workload in a sweep", func(t *testing.T) {
		wl := filepath.Join(dir, "app.sql")
		code, stdout, stderr := runCLI(ctx, "capture", captures["pcap"], "--to-workload", wl, "--reads-only")
		if code != ExitOK {
			t.Fatalf("capture --to-workload: exit %d\n%s\n%s", code, stdout, stderr)
		}
		text, err := os.ReadFile(wl)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(text), "-- @weight 40") || !strings.Contains(string(text), "{{file app.sql.values/") {
			t.Errorf("workload: want the by-customer statement weighed 40 with values from a file, got\n%s", text)
		}
		plan := writePlan(t, fmt.Sprintf(`name: captured
targets:
  - name: ctl
    url: %s
    role: control
  - name: cand
    url: %s
workloads:
  - name: sql
    options: {file: %s}
threads: [1, 2]
time: 1
`, ctlURL, candURL, wl))
		code, stdout, stderr = runCLI(ctx, "sweep", plan, "--store", filepath.Join(dir, "sweep.db"))
		if code != ExitOK || !strings.Contains(stdout, "4 of 4 steps ok") {
			t.Errorf("sweep of the captured workload: exit %d\n%s\n%s", code, stdout, stderr)
		}
	})
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

// tailFile copies path from offset on to out.
func tailFile(t *testing.T, path string, offset int64, out string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, b[offset:], 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

func readCapture(t *testing.T, path string) []capture.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd, err := capture.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []capture.Record
	for {
		var r capture.Record
		if err := rd.Next(&r); err != nil {
			break
		}
		out = append(out, r)
	}
	return out
}

// pacedCapture writes a capture of one session of n point selects, 50 ms
// apart.
func pacedCapture(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "paced.capture")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := capture.NewWriter(f, []string{"test"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := w.Write(&capture.Record{Session: "1", Seq: int64(i + 1), TS: 1e15 + int64(i)*50000, DB: "shop", SQL: fmt.Sprintf("SELECT total FROM orders WHERE id = %d", i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

// killSessions kills the replay's connection on the server at port once it
// has one, and returns how many it killed.
func killSessions(t *testing.T, ctx context.Context, port int, done <-chan struct{}) int {
	t.Helper()
	db, err := sql.Open("mysql", dsnOf(port, ""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		select {
		case <-done:
			return 0
		default:
		}
		var ids []int64
		rows, err := db.QueryContext(ctx, "SELECT id FROM information_schema.processlist WHERE db = 'shop' AND id <> CONNECTION_ID() AND time >= 0")
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id int64
			rows.Scan(&id)
			ids = append(ids, id)
		}
		rows.Close()
		if len(ids) == 0 {
			continue
		}
		time.Sleep(300 * time.Millisecond) // a few statements first
		killed := 0
		for _, id := range ids {
			_, err := db.ExecContext(ctx, fmt.Sprintf("KILL CONNECTION %d", id))
			var me *mysql.MySQLError
			switch {
			case err == nil:
				killed++
			case errors.As(err, &me) && me.Number == 1094: // ER_NO_SUCH_THREAD: it closed in the meantime
			default:
				t.Fatal(err)
			}
		}
		if killed > 0 {
			return killed
		}
	}
	return 0
}

func TestCaptureReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	csv := write("data.csv", []byte("id,name\n1,bob\n"))
	// A pcap header alone: a capture with no packet at all.
	empty := write("empty.pcap", []byte("\xd4\xc3\xb2\xa1\x02\x00\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\x00\x00\x01\x00\x00\x00"))
	notCapture := write("x.capture", []byte("SELECT 1;\n"))
	u := "mysql://u@127.0.0.1:1/a"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"capture no source", []string{"capture", "-o", "x"}, "name at least one SOURCE"},
		{"capture nothing to make", []string{"capture", csv}, "-o CAPTURE, --summary or --to-workload"},
		{"capture unknown format", []string{"capture", csv, "-o", filepath.Join(dir, "o")}, "read formats are slow, general, pcap"},
		{"capture bad --format", []string{"capture", csv, "-o", "x", "--format", "binlog"}, `--format "binlog": read formats are slow, general, pcap`},
		{"capture missing file", []string{"capture", filepath.Join(dir, "nope.log"), "-o", "x"}, "nope.log: no such file"},
		{"capture pcap without traffic", []string{"capture", empty, "-o", filepath.Join(dir, "o2"), "--port", "3310"}, "to or from port 3310"},
		{"capture reads-only alone", []string{"capture", csv, "-o", "x", "--reads-only"}, "--reads-only goes with --to-workload"},
		{"replay no capture", []string{"replay", "--control", u, "--candidate", u}, "want one CAPTURE file, got 0"},
		{"replay no control", []string{"replay", notCapture, "--candidate", u}, "--control URL is required"},
		{"replay no candidate", []string{"replay", notCapture, "--control", u}, "--candidate URL is required"},
		{"replay not a URL", []string{"replay", notCapture, "--control", "db1", "--candidate", u}, "--control must be a URL"},
		{"replay negative speed", []string{"replay", notCapture, "--control", u, "--candidate", u, "--speed", "-1"}, "--speed must be >= 0"},
		{"replay same names", []string{"replay", notCapture, "--control", "a=" + u, "--candidate", "a=" + u}, `two targets are named "a"`},
		{"replay unset password_env", []string{"replay", notCapture, "--control", u + "?password_env=NOPE_PW", "--candidate", u}, "environment variable NOPE_PW is not set"},
		{"replay not a capture", []string{"replay", notCapture, "--control", u, "--candidate", u}, "not a shakedown capture file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(context.Background(), tc.args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d, stderr %q; want %d and %q", code, stderr, ExitUsage, tc.want)
			}
			if stdout != "" {
				t.Errorf("got stdout %q, want none", stdout)
			}
		})
	}
}

func TestCaptureReportsGarbledLines(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "general.log")
	text := "Time\t\t    Id Command\tArgument\n" +
		"261122 21:56:57\t     5 Connect\tapp@127.0.0.1 on shop using TCP/IP\n" +
		"261122 21:56:57\tgarbled\n" +
		"\t\t     5 Query\tSELECT 1\n"
	if err := os.WriteFile(log, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "x.capture")
	code, stdout, stderr := runCLI(context.Background(), "capture", log, "-o", out, "--summary")
	if code != ExitOK {
		t.Fatalf("got exit %d: %s", code, stderr)
	}
	for _, want := range []string{log + ":3: unreadable general log entry", log + ": 1 of 3 entries skipped: 1 unreadable general log entry (line 3)",
		"1 statements in 1 sessions written to " + out} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr: want %q in\n%s", want, stderr)
		}
	}
	if !strings.Contains(stdout, "1 statements in 1 sessions, 1 fingerprints") || !strings.Contains(stdout, "3 entries: 1 statements, 1 not statements, 1 skipped (1 unreadable general log entry (line 3))") {
		t.Errorf("summary: got\n%s", stdout)
	}
}

func TestReplayHidesPassword(t *testing.T) {
	dir := t.TempDir()
	capFile := filepath.Join(dir, "x.capture")
	f, err := os.Create(capFile)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := capture.NewWriter(f, nil, time.Now())
	w.Write(&capture.Record{Session: "1", Seq: 1, SQL: "SELECT 1"})
	w.Flush()
	f.Close()
	port := closedPort(t)
	vars := map[string]string{"PW": "s3cr3t-pw"}
	u := fmt.Sprintf("mysql://u@127.0.0.1:%d/db?timeout=2s&password_env=PW", port)
	code, stdout, stderr := runEnv(context.Background(), vars, "replay", capFile, "--control", u, "--candidate", "mysql://u:inline-pw@127.0.0.1:1/db?timeout=2s")
	if code != ExitFailure || !strings.Contains(stderr, "connection refused") {
		t.Errorf("got exit %d, stderr %q; want 1 and connection refused", code, stderr)
	}
	if strings.Contains(stdout+stderr, "s3cr3t-pw") || strings.Contains(stdout+stderr, "inline-pw") {
		t.Error("a password was printed")
	}
}

// canonFP spells a fingerprint so that shakedown's and pt-upgrade's compare:
// lowercase, without backquotes, spaces or digits.
func canonFP(fp string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(fp) {
		switch {
		case r == '`' || r == ' ':
		case r >= '0' && r <= '9':
		default:
			b.WriteRune(r)
		}
	}
	return strings.ReplaceAll(b.String(), "(...)", "(?+)")
}

// ptDiffering reads pt-upgrade's report: the fingerprints of the query
// classes reported for differing results or errors (not for query times
// alone, which replay judges over all of a fingerprint's statements).
func ptDiffering(report string) []string {
	var out []string
	lines := strings.Split(report, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "Reporting class because") {
			continue
		}
		why := lines[i]
		keep := strings.Contains(why, "row diff") || strings.Contains(why, "row count") || strings.Contains(why, "warning") || strings.Contains(why, "query error")
		for j := i + 1; j < len(lines); j++ {
			if strings.HasPrefix(lines[j], "Discarded queries") {
				if keep && j+2 < len(lines) {
					out = append(out, canonFP(lines[j+2]))
				}
				i = j
				break
			}
		}
	}
	return out
}

func TestCaptureReplayHelp(t *testing.T) {
	for _, tc := range []struct{ cmd, want string }{
		{"capture", "--to-workload"},
		{"replay", "--allow-writes"},
	} {
		code, stdout, _ := runCLI(context.Background(), tc.cmd, "--help")
		if code != ExitOK || !strings.Contains(stdout, "usage: shakedown "+tc.cmd) || !strings.Contains(stdout, tc.want) {
			t.Errorf("%s --help: got exit %d and %q", tc.cmd, code, stdout)
		}
	}
	_, stdout, _ := runCLI(context.Background(), "help")
	for _, want := range []string{"capture ", "replay "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help: want %q in %q", want, stdout)
		}
	}
}
