package oltp

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

var (
	cRe   = regexp.MustCompile(`^([0-9]{11}-){9}[0-9]{11}$`)
	padRe = regexp.MustCompile(`^([0-9]{11}-){4}[0-9]{11}$`)
)

// checkRows checks that table has ids 1..size, k in 1..size, c and pad in the
// templates' shape.
func checkRows(t *testing.T, db *sql.DB, table string, size int64) {
	t.Helper()
	var n, minID, maxID, distinct, minK, maxK int64
	q := "SELECT COUNT(*), COALESCE(MIN(id),0), COALESCE(MAX(id),0), COUNT(DISTINCT id), COALESCE(MIN(k),0), COALESCE(MAX(k),0) FROM " + table
	if err := db.QueryRow(q).Scan(&n, &minID, &maxID, &distinct, &minK, &maxK); err != nil {
		t.Fatal(err)
	}
	if size == 0 {
		if n != 0 {
			t.Errorf("%s: got %d rows, want none", table, n)
		}
		return
	}
	if n != size || minID != 1 || maxID != size || distinct != size {
		t.Errorf("%s: got %d rows, ids %d..%d (%d distinct), want %d rows with ids 1..%d", table, n, minID, maxID, distinct, size, size)
	}
	if minK < 1 || maxK > size {
		t.Errorf("%s: got k in %d..%d, want within 1..%d", table, minK, maxK, size)
	}
	rows, err := db.Query("SELECT c, pad FROM " + table + " LIMIT 1000")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var c, pad string
		if err := rows.Scan(&c, &pad); err != nil {
			t.Fatal(err)
		}
		if !cRe.MatchString(c) || !padRe.MatchString(pad) {
			t.Fatalf("%s: got c %q pad %q, want digit groups", table, c, pad)
		}
	}
}

func showCreate(t *testing.T, db *sql.DB, table string) string {
	t.Helper()
	var name, ddl string
	if err := db.QueryRow("SHOW CREATE TABLE "+table).Scan(&name, &ddl); err != nil {
		t.Fatal(err)
	}
	return ddl
}

func TestPrepareRowsAndOutput(t *testing.T) {
	s := sharedServer(t)
	ctx := context.Background()
	tests := []struct {
		name     string
		workload string
		args     []string
		threads  int
		rows     int64 // per table after prepare
		wantOut  []string
	}{
		{"one table four threads", "oltp_read_write", []string{"--table-size=5003"}, 4, 5003, []string{
			"Creating table 'sbtest1'...", "Inserting 5003 records into 'sbtest1'", "Creating a secondary index on 'sbtest1'..."}},
		{"three tables two threads no index", "oltp_read_only", []string{"--table-size=2000", "--tables=3", "--create_secondary=off"}, 2, 2000, []string{
			"Creating table 'sbtest1'...", "Creating table 'sbtest2'...", "Creating table 'sbtest3'...",
			"Inserting 2000 records into 'sbtest1'", "Inserting 2000 records into 'sbtest3'"}},
		{"insert auto_inc off leaves tables empty", "oltp_insert", []string{"--table-size=2000", "--auto_inc=off"}, 2, 0, []string{
			"Creating table 'sbtest1'...", "Creating a secondary index on 'sbtest1'..."}},
		{"random points prepares more tables", "select_random_points", []string{"--table-size=100", "--tables=2"}, 1, 100, []string{
			"Creating table 'sbtest2'...", "Inserting 100 records into 'sbtest2'"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGen(t, tt.workload, tt.args...)
			var out bytes.Buffer
			env := prepareEnv(s, tt.threads, &out)
			dropAll(t, s.db)
			if err := g.Prepare(ctx, env); err != nil {
				t.Fatalf("prepare: %v\n%s", err, out.String())
			}
			defer dropAll(t, s.db)
			for i := 1; i <= g.opts.Tables; i++ {
				checkRows(t, s.db, tableName(i), tt.rows)
			}
			for _, line := range tt.wantOut {
				if !strings.Contains(out.String(), line+"\n") {
					t.Errorf("output lacks %q:\n%s", line, out.String())
				}
			}
			if !regexp.MustCompile(`(?m)^Prepared \d+ tables with \d+ rows each in [0-9.]+s \([0-9]+ rows/s\)$`).MatchString(out.String()) {
				t.Errorf("output lacks the summary line:\n%s", out.String())
			}
		})
	}
}

// TestPrepareKDistribution checks that k follows --rand-type: with special,
// about 75% of the rows have k in the middle 1% of the range.
func TestPrepareKDistribution(t *testing.T) {
	s := sharedServer(t)
	ctx := context.Background()
	g := newGen(t, "oltp_read_write", "--table-size=20000", "--create_secondary=off")
	dropAll(t, s.db)
	defer dropAll(t, s.db)
	if err := g.Prepare(ctx, prepareEnv(s, 2, new(bytes.Buffer))); err != nil {
		t.Fatal(err)
	}
	var f float64
	if err := s.db.QueryRow("SELECT AVG(k BETWEEN 9900 AND 10100) FROM sbtest1").Scan(&f); err != nil {
		t.Fatal(err)
	}
	if f < 0.74 || f > 0.80 {
		t.Errorf("got %.3f of k in the middle 1%%, want about 0.76", f)
	}
}

func TestPrepareInsertFallback(t *testing.T) {
	s := sharedServer(t)
	ctx := context.Background()
	g := newGen(t, "oltp_read_write", "--table-size=30000", "--tables=2")
	var out bytes.Buffer
	dropAll(t, s.db)
	defer dropAll(t, s.db)
	o := g.opts
	l := &loader{env: prepareEnv(s, 3, &out), opts: &o, chunkRows: 7000}
	l.noLoadData.Store(true) // as after the server refused LOAD DATA
	before := status(t, s.db)
	if err := l.run(ctx); err != nil {
		t.Fatalf("prepare: %v\n%s", err, out.String())
	}
	after := status(t, s.db)
	if after["insert"] == before["insert"] {
		t.Error("no INSERT was sent")
	}
	for i := 1; i <= 2; i++ {
		checkRows(t, s.db, tableName(i), 30000)
	}
}

func TestPrepareLoadDataRefused(t *testing.T) {
	if os.Getenv("SHAKEDOWN_TEST_URL") != "" {
		t.Skip("needs a sandbox of its own; SHAKEDOWN_TEST_URL is set")
	}
	inst := sandboxtest.Start(t, "local_infile=OFF")
	s := openServer(t, inst.URL())
	g := newGen(t, "oltp_read_write", "--table-size=3000", "--tables=2")
	var out bytes.Buffer
	if err := g.Prepare(context.Background(), prepareEnv(s, 2, &out)); err != nil {
		t.Fatalf("prepare: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "LOAD DATA LOCAL INFILE is not allowed") {
		t.Errorf("output does not say LOAD DATA was refused:\n%s", out.String())
	}
	for i := 1; i <= 2; i++ {
		checkRows(t, s.db, tableName(i), 3000)
	}
}

func dropAll(t *testing.T, db *sql.DB) {
	t.Helper()
	for i := 1; i <= 4; i++ {
		if _, err := db.Exec(dropTableSQL(i)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDDLMatchesSysbench prepares with shakedown and with the real sysbench
// 1.0.20 (when installed) into two databases and compares SHOW CREATE TABLE.
func TestDDLMatchesSysbench(t *testing.T) {
	sb, err := exec.LookPath("sysbench")
	if err != nil {
		t.Skip("sysbench is not installed")
	}
	s := sharedServer(t)
	ctx := context.Background()
	const refDB = "shakedown_sbref"
	if _, err := s.db.Exec("CREATE DATABASE IF NOT EXISTS " + refDB); err != nil {
		t.Fatal(err)
	}
	defer s.db.Exec("DROP DATABASE IF EXISTS " + refDB)
	ep := s.tg.Endpoints()[0]
	host, port := ep.Host, strconv.Itoa(ep.Port)
	tests := []struct {
		name string
		args []string
	}{
		{"defaults", nil},
		{"auto_inc off", []string{"--auto_inc=off"}},
		{"secondary", []string{"--secondary=on"}},
		{"no secondary index", []string{"--create_secondary=off"}},
		{"myisam", []string{"--mysql_storage_engine=myisam"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"--table-size=500", "--tables=2"}, tt.args...)
			g := newGen(t, "oltp_read_write", args...)
			dropAll(t, s.db)
			defer dropAll(t, s.db)
			if err := g.Prepare(ctx, prepareEnv(s, 2, new(bytes.Buffer))); err != nil {
				t.Fatal(err)
			}
			sbArgs := append([]string{"oltp_read_write", "--mysql-host=" + host, "--mysql-port=" + port,
				"--mysql-user=" + s.tg.User, "--mysql-password=" + s.tg.Password, "--mysql-db=" + refDB}, args...)
			_ = exec.Command(sb, append(sbArgs, "cleanup")...).Run()
			if out, err := exec.Command(sb, append(sbArgs, "prepare")...).CombinedOutput(); err != nil {
				t.Fatalf("sysbench prepare: %v\n%s", err, out)
			}
			defer exec.Command(sb, append(sbArgs, "cleanup")...).Run()
			for i := 1; i <= 2; i++ {
				got := showCreate(t, s.db, tableName(i))
				want := showCreate(t, s.db, refDB+"."+tableName(i))
				if got != want {
					t.Errorf("%s: got\n%s\nwant (sysbench)\n%s", tableName(i), got, want)
				}
				var gotN, wantN int64
				s.db.QueryRow("SELECT COUNT(*) FROM " + tableName(i)).Scan(&gotN)
				s.db.QueryRow("SELECT COUNT(*) FROM " + refDB + "." + tableName(i)).Scan(&wantN)
				if gotN != wantN {
					t.Errorf("%s: got %d rows, want %d", tableName(i), gotN, wantN)
				}
			}
		})
	}
}

// TestPrepareSpeed loads SHAKEDOWN_PREPARE_BENCH=tables,rows,threads and
// reports the rate; it is for measuring, not run by default.
func TestPrepareSpeed(t *testing.T) {
	spec := os.Getenv("SHAKEDOWN_PREPARE_BENCH")
	if spec == "" {
		t.Skip("set SHAKEDOWN_PREPARE_BENCH=tables,rows,threads to measure prepare")
	}
	var tables, rows, threads int
	if _, err := fmt.Sscanf(spec, "%d,%d,%d", &tables, &rows, &threads); err != nil {
		t.Fatalf("SHAKEDOWN_PREPARE_BENCH=%q: %v", spec, err)
	}
	s := sharedServer(t)
	ctx := context.Background()
	g := newGen(t, "oltp_read_write", "--tables="+strconv.Itoa(tables), "--table-size="+strconv.Itoa(rows))
	var out bytes.Buffer
	env := prepareEnv(s, threads, &out)
	_ = g.Cleanup(ctx, env)
	start := time.Now()
	if err := g.Prepare(ctx, env); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d x %d rows, %d threads: %v\n%s", tables, rows, threads, time.Since(start), out.String())
	if os.Getenv("SHAKEDOWN_PREPARE_KEEP") == "" {
		_ = g.Cleanup(ctx, env)
	}
}
