package hotrow_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/sandbox/gmstest"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	_ "github.com/shakedown/shakedown/internal/workload/hotrow"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// hotrow prepares table on url with --rows (dropping it first) and returns
// a function that runs hotrow on it with args.
func hotrow(t *testing.T, url, table string, rows int) func(opt bench.RunOptions, args ...string) (*result.Result, error) {
	t.Helper()
	ctx := context.Background()
	opts := []string{"hotrow", "--table=" + table, "--rows=" + strconv.Itoa(rows), "--target=" + url}
	for _, verb := range []string{"cleanup", "prepare"} {
		j, err := bench.Parse(verb, opts, &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		if err := j.Prepare(ctx, bench.PrepareOptions{}); err != nil {
			t.Fatalf("%s: %v", verb, err)
		}
	}
	return func(opt bench.RunOptions, args ...string) (*result.Result, error) {
		t.Helper()
		j, err := bench.Parse("run", append(append([]string{"--monitor=off"}, opts...), args...), &bytes.Buffer{})
		if err != nil {
			t.Fatal(err)
		}
		return j.Run(ctx, opt)
	}
}

// open connects to url as the tests' own client, apart from the run.
func open(t *testing.T, url string) *sql.DB {
	t.Helper()
	rest := strings.TrimPrefix(url, "mysql://")
	at, slash := strings.LastIndex(rest, "@"), strings.Index(rest, "/")
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = rest[:at], "tcp", rest[at+1:slash], rest[slash+1:]
	if u, p, ok := strings.Cut(cfg.User, ":"); ok {
		cfg.User, cfg.Passwd = u, p
	}
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// TestHotrowStockHolds: on MariaDB the stock falls by exactly the
// decrements that committed, at one thread and at many, in a transaction
// and in autocommit.
func TestHotrowStockHolds(t *testing.T) {
	url := sandboxtest.URL(t)
	for _, tc := range []struct {
		name string
		rows int
		args []string
	}{
		{"one thread", 1, []string{"--threads=1", "--events=300"}},
		{"16 threads", 1, []string{"--threads=16", "--events=3000"}},
		{"16 threads on 3 rows", 3, []string{"--threads=16", "--events=3000", "--skew=1.2"}},
		{"autocommit", 1, []string{"--threads=8", "--events=1000", "--skip-trx"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			res, err := hotrow(t, url, "hot_holds", tc.rows)(bench.RunOptions{Out: &out}, tc.args...)
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			c := res.DataCheck
			if c == nil {
				t.Fatal("got no data check, want one")
			}
			if !c.OK() || c.Observed != c.Expected || c.InDoubt != 0 {
				t.Errorf("got %+v, want the change to be exactly the committed decrements", c)
			}
			if c.Committed != res.Transactions || c.Expected != -res.Transactions {
				t.Errorf("got %d committed and a change of %d, want %d and -%d", c.Committed, c.Expected, res.Transactions, res.Transactions)
			}
			if !strings.Contains(out.String(), "data check:                    ok:") {
				t.Errorf("summary has no data check line:\n%s", out.String())
			}
		})
	}
}

// TestHotrowLostUpdates: another connection moves the stock during the
// run, by a change no committed transaction of the run made. The run
// says so in its summary and its document, and fails.
func TestHotrowLostUpdates(t *testing.T) {
	url := sandboxtest.URL(t)
	db := open(t, url)
	for _, tc := range []struct {
		name   string
		inject string
		lost   int64
	}{
		{"stock raised: decrements lost", "UPDATE hot_lost SET num=num+5 WHERE id=1", 5},
		{"stock lowered: a change of its own", "UPDATE hot_lost SET num=num-3 WHERE id=1", -3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := hotrow(t, url, "hot_lost", 1)
			var once sync.Once
			var injectErr error
			opt := bench.RunOptions{OnInterval: func(runner.Interval) {
				once.Do(func() { _, injectErr = db.Exec(tc.inject) })
			}}
			var out bytes.Buffer
			opt.Out = &out
			res, err := run(opt, "--threads=4", "--time=2")
			if injectErr != nil {
				t.Fatal(injectErr)
			}
			if !errors.Is(err, bench.ErrDataCheck) {
				t.Fatalf("got error %v, want ErrDataCheck\n%s", err, out.String())
			}
			c := res.DataCheck
			if c == nil || c.LostUpdates != tc.lost {
				t.Fatalf("got data check %+v, want %d lost updates", c, tc.lost)
			}
			line := "LOST UPDATES: " + itoa(tc.lost) + " of " + itoa(c.Committed) + " committed transactions"
			if !strings.Contains(out.String(), line) || !strings.Contains(err.Error(), line) {
				t.Errorf("got error %q and summary\n%s\nwant both to say %q", err, out.String(), line)
			}
			var doc struct {
				Error     string `json:"error"`
				DataCheck struct {
					Lost      int64 `json:"lost_updates"`
					Committed int64 `json:"committed"`
				} `json:"data_check"`
			}
			var js bytes.Buffer
			if err := res.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.DataCheck.Lost != tc.lost || doc.DataCheck.Committed != c.Committed || !strings.HasPrefix(doc.Error, line) {
				t.Errorf("got data_check %+v and error %q in the document, want %d lost of %d and the line", doc.DataCheck, doc.Error, tc.lost, c.Committed)
			}
			// The command's status and error, and a result file read back.
			status, endErr := bench.Ending(res, err, false)
			if status != result.StatusFailed || endErr == nil {
				t.Errorf("got status %q and error %v, want failed and an error (a non-zero exit)", status, endErr)
			}
			back, rerr := result.Read(&js)
			if rerr != nil {
				t.Fatal(rerr)
			}
			if st, _ := back.Status(); st != result.StatusFailed {
				t.Errorf("read back: got status %q, want failed", st)
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestHotrowGoMySQLServer runs hotrow on go-mysql-server, which Dolt is
// built on. One thread keeps the stock exact. With eight, whatever its
// engine does with concurrent updates of one row (it has been seen to
// merge them: 16697 of 23946 lost), the check must agree with the stock
// read back, and a run that lost updates must fail.
func TestHotrowGoMySQLServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts a server")
	}
	url := gmstest.Start(t).URL
	db := open(t, url)
	res, err := hotrow(t, url, "hot_gms", 1)(bench.RunOptions{}, "--threads=1", "--events=500")
	if err != nil || res.DataCheck == nil || !res.DataCheck.OK() || res.DataCheck.Observed != -500 {
		t.Fatalf("one thread: got %v and check %+v, want the stock 500 lower", err, res.DataCheck)
	}
	var out bytes.Buffer
	res, err = hotrow(t, url, "hot_gms", 1)(bench.RunOptions{Out: &out}, "--threads=8", "--time=3")
	if res == nil || res.DataCheck == nil {
		t.Fatalf("got no data check: %v\n%s", err, out.String())
	}
	c := res.DataCheck
	var after int64
	if err := db.QueryRow("SELECT num FROM hot_gms WHERE id=1").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if after != c.After || c.Before != 1000000000 {
		t.Errorf("got a check from %d to %d, want from 1000000000 to the %d the table holds", c.Before, c.After, after)
	}
	t.Logf("go-mysql-server: %d committed, stock fell by %d, %d in doubt, %d errors %v: %s",
		c.Committed, -c.Observed, c.InDoubt, res.Errors.Total, res.Errors.ByCode, c.Finding())
	if c.OK() != (err == nil) || !c.OK() && !errors.Is(err, bench.ErrDataCheck) {
		t.Errorf("got check ok %v and error %v, want a failed run exactly when updates were lost", c.OK(), err)
	}
}
