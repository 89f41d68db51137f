package oltp

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire"
	"github.com/shakedown/shakedown/internal/workload"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// server is a test database: a pool on it and its target.
type server struct {
	tg *target.Target
	db *sql.DB
}

func openServer(t *testing.T, url string) *server {
	t.Helper()
	tg, err := target.Parse(url)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	db, err := tg.Open(tg.Endpoints()[0], 8)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatalf("ping %s: %v", tg.Redacted(), err)
	}
	return &server{tg: tg, db: db}
}

func sharedServer(t *testing.T) *server {
	t.Helper()
	return openServer(t, sandboxtest.URL(t))
}

// newGen returns a configured generator of the named workload.
func newGen(t *testing.T, name string, args ...string) *generator {
	t.Helper()
	m, ok := workload.Lookup(name)
	if !ok {
		t.Fatalf("workload %s is not registered", name)
	}
	g := m.New().(*generator)
	if err := g.Flags().Parse(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	if err := g.Validate(); err != nil {
		t.Fatalf("validate %v: %v", args, err)
	}
	return g
}

func testRand() randgen.Config {
	c := randgen.Defaults()
	c.Seed = 7
	return c
}

func prepareEnv(s *server, threads int, out *bytes.Buffer) *workload.PrepareEnv {
	return &workload.PrepareEnv{DB: s.db, Threads: threads, Rand: testRand(), Out: out}
}

// status returns the server's Com_* counters of interest.
func status(t *testing.T, db *sql.DB) map[string]int64 {
	t.Helper()
	rows, err := db.Query("SHOW GLOBAL STATUS WHERE Variable_name IN " +
		"('Com_select','Com_update','Com_insert','Com_delete','Com_begin','Com_commit','Com_stmt_execute','Com_rollback')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]int64{}
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			t.Fatal(err)
		}
		m[strings.TrimPrefix(strings.ToLower(name), "com_")] = v
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return m
}

// com is the server's statement counters per event.
type com struct {
	Select, Update, Insert, Delete, Begin, Commit, StmtExecute int64
}

func (c com) String() string {
	return fmt.Sprintf("select %d update %d insert %d delete %d begin %d commit %d stmt_execute %d",
		c.Select, c.Update, c.Insert, c.Delete, c.Begin, c.Commit, c.StmtExecute)
}

// comCase is one workload and option set with the Com_* counters real
// sysbench 1.0.20 produced per event against MariaDB 10.11 (measured with
// SHOW GLOBAL STATUS around 200 and 400 events of sysbench ... run).
type comCase struct {
	name     string
	workload string
	args     []string
	want     com
	// others is the exact number of statements counted as other per
	// event, or -1 when it depends on the data (a DELETE that finds no row).
	others int64
}

var comCases = []comCase{
	{"read_write defaults", "oltp_read_write", nil, com{14, 2, 1, 1, 1, 1, 20}, -1},
	{"read_write skip_trx", "oltp_read_write", []string{"--skip_trx=on"}, com{14, 2, 1, 1, 0, 0, 18}, -1},
	{"read_write range_selects off", "oltp_read_write", []string{"--range_selects=off"}, com{10, 2, 1, 1, 1, 1, 16}, -1},
	{"read_write counts and tables", "oltp_read_write", []string{"--point_selects=3", "--simple_ranges=2", "--sum_ranges=0",
		"--order_ranges=3", "--distinct_ranges=2", "--index_updates=3", "--non_index_updates=2", "--delete_inserts=2", "--tables=3"},
		com{10, 5, 2, 2, 1, 1, 21}, -1},
	{"read_write auto_inc off secondary", "oltp_read_write", []string{"--auto_inc=off", "--secondary=on", "--create_secondary=off"},
		com{14, 2, 1, 1, 1, 1, 20}, -1},
	{"read_only defaults", "oltp_read_only", nil, com{14, 0, 0, 0, 1, 1, 16}, 2},
	{"read_only skip_trx", "oltp_read_only", []string{"--skip-trx"}, com{14, 0, 0, 0, 0, 0, 14}, 0},
	{"read_only points only", "oltp_read_only", []string{"--range_selects=off", "--point_selects=4"}, com{4, 0, 0, 0, 1, 1, 6}, 2},
	{"write_only defaults", "oltp_write_only", nil, com{0, 2, 1, 1, 1, 1, 6}, -1},
	{"write_only skip_trx delete_inserts", "oltp_write_only", []string{"--skip_trx=on", "--delete_inserts=3"}, com{0, 2, 3, 3, 0, 0, 8}, -1},
	{"point_select defaults", "oltp_point_select", nil, com{1, 0, 0, 0, 0, 0, 1}, 0},
	{"point_select ignores point_selects", "oltp_point_select", []string{"--point_selects=5"}, com{1, 0, 0, 0, 0, 0, 1}, 0},
	{"insert defaults", "oltp_insert", nil, com{0, 0, 1, 0, 0, 0, 0}, 0},
	{"insert auto_inc off", "oltp_insert", []string{"--auto_inc=off", "--tables=2"}, com{0, 0, 1, 0, 0, 0, 0}, 0},
	{"update_index defaults", "oltp_update_index", nil, com{0, 1, 0, 0, 0, 0, 1}, 0},
	{"update_index 3", "oltp_update_index", []string{"--index_updates=3"}, com{0, 3, 0, 0, 0, 0, 3}, 0},
	{"update_non_index defaults", "oltp_update_non_index", nil, com{0, 1, 0, 0, 0, 0, 1}, 0},
	{"update_non_index 3", "oltp_update_non_index", []string{"--non_index_updates=3"}, com{0, 3, 0, 0, 0, 0, 3}, 0},
	{"delete defaults", "oltp_delete", nil, com{0, 0, 0, 1, 0, 0, 1}, -1},
	{"delete ignores delete_inserts", "oltp_delete", []string{"--delete_inserts=3"}, com{0, 0, 0, 1, 0, 0, 1}, -1},
	{"random_points defaults", "select_random_points", nil, com{1, 0, 0, 0, 0, 0, 1}, 0},
	{"random_points 5", "select_random_points", []string{"--random_points=5"}, com{1, 0, 0, 0, 0, 0, 1}, 0},
	{"random_ranges defaults", "select_random_ranges", nil, com{1, 0, 0, 0, 0, 0, 1}, 0},
	{"random_ranges 3 delta 20", "select_random_ranges", []string{"--number_of_ranges=3", "--delta=20"}, com{1, 0, 0, 0, 0, 0, 1}, 0},
}

const eventsPerCase = 50

// connMode is one way a worker's connection can run: server-side prepared
// statements or text, over the lean wire protocol or database/sql.
type connMode struct {
	name string
	ps   bool
	wire bool
}

var connModes = []connMode{{"ps wire", true, true}, {"text wire", false, true}, {"ps sql", true, false}, {"text sql", false, false}}

// newConn opens a worker connection in mode m; t.Cleanup closes it.
func (s *server) newConn(t *testing.T, m connMode, counts *workload.Counts) workload.Conn {
	t.Helper()
	ctx := context.Background()
	var c workload.Conn
	if m.wire {
		ep := s.tg.Endpoints()[0]
		w, err := wire.Dial(ctx, s.tg.Config(ep, s.tg.DB), wire.Options{Blocking: true})
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		c = client.NewWire(w, m.ps, counts)
	} else {
		raw, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c = client.NewSQL(raw, m.ps, counts)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestComPerEvent(t *testing.T) {
	s := sharedServer(t)
	ctx := context.Background()
	for _, tc := range comCases {
		t.Run(tc.name, func(t *testing.T) {
			g := newGen(t, tc.workload, append([]string{"--table-size=1000"}, tc.args...)...)
			var out bytes.Buffer
			env := prepareEnv(s, 2, &out)
			dropAll(t, s.db)
			if err := g.Prepare(ctx, env); err != nil {
				t.Fatalf("prepare: %v\n%s", err, out.String())
			}
			defer func() {
				if err := g.Cleanup(ctx, env); err != nil {
					t.Errorf("cleanup: %v", err)
				}
			}()
			// One Config for all modes, each mode a thread of its own: so
			// unique ids and c values do not repeat across modes.
			rc := testRand()
			for i, m := range connModes {
				t.Run(m.name, func(t *testing.T) {
					want := tc.want
					if !m.ps {
						want.StmtExecute = 0
					}
					runComCase(t, s, g, tc, m, want, rc.New(i))
				})
			}
		})
	}
}

func runComCase(t *testing.T, s *server, g *generator, tc comCase, m connMode, want com, rnd *randgen.Rand) {
	ctx := context.Background()
	var counts workload.Counts
	conn := s.newConn(t, m, &counts)
	w, err := g.NewWorker(ctx, &workload.WorkerEnv{ID: 0, Threads: 1, Conn: conn, Rand: rnd})
	if err != nil {
		t.Fatalf("new worker: %v", err)
	}
	before := status(t, s.db)
	for i := 0; i < eventsPerCase; i++ {
		if err := w.Event(ctx); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	after := status(t, s.db)
	if f, ok := w.(workload.Finisher); ok {
		if err := f.Finish(ctx); err != nil {
			t.Errorf("finish: %v", err)
		}
	}
	per := func(k string) int64 {
		d := after[k] - before[k]
		if d%eventsPerCase != 0 {
			t.Errorf("Com_%s went up by %d in %d events: not a whole number per event", k, d, eventsPerCase)
		}
		return d / eventsPerCase
	}
	got := com{per("select"), per("update"), per("insert"), per("delete"), per("begin"), per("commit"), per("stmt_execute")}
	if got != want {
		t.Errorf("per event got %v, want %v", got, want)
	}
	if r := after["rollback"] - before["rollback"]; r != 0 {
		t.Errorf("got %d Com_rollback, want 0", r)
	}

	reads, writes, others := counts.Reads.Load(), counts.Writes.Load(), counts.Others.Load()
	if wantReads := want.Select * eventsPerCase; reads != wantReads {
		t.Errorf("got %d reads, want %d", reads, wantReads)
	}
	nonReads := (want.Update + want.Insert + want.Delete + want.Begin + want.Commit) * eventsPerCase
	if writes+others != nonReads {
		t.Errorf("got %d writes + %d others, want %d in all", writes, others, nonReads)
	}
	if tc.others >= 0 && others != tc.others*eventsPerCase {
		t.Errorf("got %d others, want %d", others, tc.others*eventsPerCase)
	}
	if tc.others < 0 && others < (want.Begin+want.Commit)*eventsPerCase {
		t.Errorf("got %d others, want at least the BEGINs and COMMITs", others)
	}
}

func TestBulkInsert(t *testing.T) {
	s := sharedServer(t)
	ctx := context.Background()
	g := newGen(t, "bulk_insert")
	var out bytes.Buffer
	env := prepareEnv(s, 2, &out)
	_ = g.Cleanup(ctx, env)
	out.Reset()
	if err := g.Prepare(ctx, env); err != nil {
		t.Fatalf("prepare: %v", err)
	}
	defer g.Cleanup(ctx, env)
	if want := "Creating table 'sbtest1'...\nCreating table 'sbtest2'...\n"; out.String() != want {
		t.Errorf("prepare printed %q, want %q", out.String(), want)
	}

	// Thread 1 appends 60000 rows "(n,n)": about 700 KB, so one INSERT is
	// sent when 512 KiB fill up and one at Finish.
	const events = 60000
	var counts workload.Counts
	conn := s.newConn(t, connModes[0], &counts)
	w, err := g.NewWorker(ctx, &workload.WorkerEnv{ID: 1, Threads: 2, Conn: conn, Rand: testRand().New(1)})
	if err != nil {
		t.Fatal(err)
	}
	before := status(t, s.db)
	for i := 0; i < events; i++ {
		if err := w.Event(ctx); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	mid := status(t, s.db)
	if err := w.(workload.Finisher).Finish(ctx); err != nil {
		t.Fatal(err)
	}
	after := status(t, s.db)
	if got := mid["insert"] - before["insert"]; got != 1 {
		t.Errorf("got %d INSERTs before Finish, want 1", got)
	}
	if got := after["insert"] - mid["insert"]; got != 1 {
		t.Errorf("got %d INSERTs at Finish, want 1", got)
	}
	if got := counts.Writes.Load(); got != 2 {
		t.Errorf("got %d writes, want 2", got)
	}
	var n, minID, maxID, sumDiff int64
	if err := s.db.QueryRow("SELECT COUNT(*), MIN(id), MAX(id), SUM(k <> id) FROM sbtest2").Scan(&n, &minID, &maxID, &sumDiff); err != nil {
		t.Fatal(err)
	}
	if n != events || minID != 1 || maxID != events || sumDiff != 0 {
		t.Errorf("sbtest2 has %d rows, ids %d..%d, %d with k <> id; want %d rows, ids 1..%d, k = id", n, minID, maxID, sumDiff, events, events)
	}
	out.Reset()
	if err := g.Cleanup(ctx, env); err != nil {
		t.Fatal(err)
	}
	if want := "Dropping table 'sbtest1'...\nDropping table 'sbtest2'...\n"; out.String() != want {
		t.Errorf("cleanup printed %q, want %q", out.String(), want)
	}
}

// BenchmarkEvent runs events of a few workloads on the lean wire connection
// and reports allocations per event (the server's work dominates the time).
func BenchmarkEvent(b *testing.B) {
	if testing.Short() {
		b.Skip("needs a database server")
	}
	tg, err := target.Parse(sandboxtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	db, err := tg.Open(tg.Endpoints()[0], 4)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for _, name := range []string{"oltp_read_write", "oltp_point_select", "oltp_insert", "select_random_ranges"} {
		b.Run(name, func(b *testing.B) {
			m, _ := workload.Lookup(name)
			g := m.New().(*generator)
			if err := g.Flags().Parse([]string{"--table-size=10000"}); err != nil {
				b.Fatal(err)
			}
			env := &workload.PrepareEnv{DB: db, Threads: 2, Rand: testRand(), Out: io.Discard}
			_ = g.Cleanup(ctx, env)
			if err := g.Prepare(ctx, env); err != nil {
				b.Fatal(err)
			}
			defer g.Cleanup(ctx, env)
			wc, err := wire.Dial(ctx, tg.Config(tg.Endpoints()[0], tg.DB), wire.Options{})
			if err != nil {
				b.Fatal(err)
			}
			var counts workload.Counts
			conn := client.NewWire(wc, true, &counts)
			defer conn.Close()
			w, err := g.NewWorker(ctx, &workload.WorkerEnv{ID: 0, Threads: 1, Conn: conn, Rand: testRand().New(0)})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := w.Event(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
