package store

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

var dbSeq atomic.Int64

// openMySQL opens a store in a database of its own on the shared test
// server; OpenMySQL creates the database.
func openMySQL(t *testing.T) *Store {
	t.Helper()
	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	tg.DB = fmt.Sprintf("store_%d_%d", os.Getpid(), dbSeq.Add(1))
	s, err := OpenMySQL(context.Background(), tg)
	if err != nil {
		t.Fatalf("OpenMySQL: %v", err)
	}
	t.Cleanup(func() {
		s.db.Exec("DROP DATABASE `" + tg.DB + "`")
		s.Close()
	})
	return s
}

// backends runs fn against a SQLite file and a store on a MariaDB
// server: the contract every backend keeps.
func backends(t *testing.T, fn func(t *testing.T, s *Store)) {
	t.Run("sqlite", func(t *testing.T) {
		s, _ := openTemp(t)
		fn(t, s)
	})
	t.Run("mysql", func(t *testing.T) {
		fn(t, openMySQL(t))
	})
}

// The translated DDL keeps the same tables and columns as SQLite's.
func TestSchemasMatch(t *testing.T) {
	ctx := context.Background()
	lite, _ := openTemp(t)
	my := openMySQL(t)
	columns := func(s *Store, q string) map[string][]string {
		rows, err := s.db.QueryContext(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		out := map[string][]string{}
		for rows.Next() {
			var tbl, col string
			if err := rows.Scan(&tbl, &col); err != nil {
				t.Fatal(err)
			}
			out[tbl] = append(out[tbl], col)
		}
		for _, c := range out {
			sort.Strings(c)
		}
		return out
	}
	got := columns(my, `SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()`)
	want := columns(lite, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'`)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MySQL tables:\n%v\nwant SQLite's:\n%v", got, want)
	}
}

func TestContractRoundTrip(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		start := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
		sw := &Sweep{Name: "n", PlanPath: "p.yaml", Plan: "threads: [1]\n", StartedAt: start, Steps: 1, ClientHost: "h", Tool: "t",
			Settings: Settings{TimeS: 5, Threads: []int{1}, Workloads: []string{"oltp_point_select"}}}
		targets := []Target{{Name: "a", Role: "control", URL: "mysql://u@h:1/db", Version: "11", Flavour: "mariadb", Variables: map[string]string{"x": "1"}}}
		id, err := s.CreateSweep(ctx, sw, targets)
		if err != nil {
			t.Fatal(err)
		}
		res := &result.Result{SchemaVersion: 1, Workload: "oltp_point_select", Threads: 1, QPS: 10,
			Intervals: []result.Interval{{AtS: 1, QPS: 10}}, Errors: result.Errors{ByCode: map[string]int64{}}}
		run := &Run{SweepID: id, Step: 1, Target: "a", Role: "control", Workload: "oltp_point_select", Threads: 1, Repeat: 1,
			Status: RunOK, StartedAt: start, Result: res}
		if _, err := s.AddRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		d, err := s.Load(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		sw.Status = SweepRunning
		if !reflect.DeepEqual(d.Sweep, *sw) || !reflect.DeepEqual(d.Targets, targets) || len(d.Runs) != 1 || d.Runs[0].Result.QPS != 10 {
			t.Errorf("got %+v, want the sweep, its target and its run back", d)
		}
		if _, err := s.AddEvidence(ctx, &Evidence{Kind: KindCheck, Source: "s", Target: "t", Outcome: OutcomePass, Document: []byte("{}")}); err != nil {
			t.Fatal(err)
		}
		if e, err := s.LatestEvidence(ctx, KindCheck, nil); err != nil || e.Outcome != OutcomePass {
			t.Errorf("evidence: got %+v, %v", e, err)
		}
		saved := Baseline{Name: "b", CreatedAt: start, Target: "a", Source: "sweep 1", RunIDs: []int64{run.ID}, WitnessRunIDs: []int64{run.ID + 1}}
		if err := s.SaveBaseline(ctx, &saved); err != nil {
			t.Fatal(err)
		}
		if bs, err := s.Baselines(ctx); err != nil || len(bs) != 1 || !reflect.DeepEqual(bs[0], saved) {
			t.Errorf("baselines: got %+v, %v; want %+v", bs, err, saved)
		}
		if err := s.SaveBaseline(ctx, &Baseline{Name: "b", CreatedAt: start}); !errors.Is(err, ErrExists) {
			t.Errorf("a baseline saved twice: got %v, want ErrExists", err)
		}
		if _, err := s.Now(ctx); err != nil {
			t.Errorf("Now: %v", err)
		}
	})
}

// part makes runner idx's result of a split run: seconds intervals of
// perSecond samples, recorded in all too.
func part(t *testing.T, idx, n, seconds, perSecond int, start time.Time, all *histogram.Histogram) (*result.Result, []result.IntervalHDR) {
	t.Helper()
	rnd := rand.New(rand.NewPCG(uint64(idx), 7))
	total := histogram.New()
	var ivs []result.IntervalHDR
	for k := range seconds {
		h := histogram.New()
		for range perSecond {
			d := time.Duration(100+rnd.ExpFloat64()*float64(500*(idx+1))) * time.Microsecond
			h.Record(d)
			all.Record(d)
		}
		total.Merge(h)
		snap, err := h.Snapshot()
		if err != nil {
			t.Fatal(err)
		}
		b := start.Add(time.Duration(k) * time.Second)
		ivs = append(ivs, result.IntervalHDR{StartUS: b.UnixMicro(), EndUS: b.Add(time.Second).UnixMicro(), Threads: 1,
			Events: int64(perSecond), Reads: int64(perSecond), Latency: snap})
	}
	snap, err := total.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	q := int64(seconds * perSecond)
	label := fmt.Sprintf("%d/%d", idx+1, n)
	return &result.Result{SchemaVersion: 1, Workload: "oltp_point_select", Threads: 1, Percentile: 95, TimeS: float64(seconds),
		Queries: result.Queries{Read: q, Total: q}, Transactions: q, QPS: float64(perSecond), Histogram: snap,
		Errors:  result.Errors{ByCode: map[string]int64{}},
		Segment: &result.Segment{Label: label, Index: idx, Runners: n, Started: start, Measured: start}}, ivs
}

// Four runners join one split run at once, register their segments and
// report; reading the store gives one run, their exact merge. A segment
// registered or reported twice is refused; a missing one makes the merge
// partial.
func TestContractSplit(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
		const n = 4
		seq := "0,1/4,1/2,3/4,1"
		splits := make([]*Split, n)
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				splits[i] = &Split{Key: "k1", Kind: SplitRun, Sequence: seq, Runners: n, StartAt: start, Description: "run oltp_point_select"}
				errs[i] = s.JoinSplit(ctx, splits[i], nil, nil)
			}()
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("runner %d: JoinSplit: %v", i, errs[i])
			}
			if splits[i].ID != splits[0].ID {
				t.Fatalf("runners joined splits %d and %d, want one", splits[0].ID, splits[i].ID)
			}
		}
		id := splits[0].ID
		other := &Split{Key: "k1", Kind: SplitRun, Sequence: "0,1/2,1", Runners: 2}
		if err := s.JoinSplit(ctx, other, nil, nil); !errors.Is(err, ErrOtherSequence) {
			t.Errorf("another sequence: got %v, want ErrOtherSequence", err)
		}
		all := histogram.New()
		var sum int64
		for i := range n {
			r := &Runner{SplitID: id, Index: i, Segment: fmt.Sprintf("%d/4:%d/4", i, i+1), Label: fmt.Sprintf("%d/4", i+1),
				Host: fmt.Sprintf("host-%d", i), RegisteredAt: start}
			if err := s.Register(ctx, r); err != nil {
				t.Fatal(err)
			}
			if i == n-1 {
				continue // registered, never reports
			}
			res, ivs := part(t, i, n, 3, 100*(i+1), start, all)
			sum += res.Queries.Total
			run := &Run{Target: "db", Workload: "oltp_point_select", Threads: 4, Status: RunOK, StartedAt: start, Result: res,
				Part: &Part{SplitID: id, Index: i, Intervals: ivs}}
			if _, err := s.AddRun(ctx, run); err != nil {
				t.Fatal(err)
			}
		}
		err := s.Register(ctx, &Runner{SplitID: id, Index: 1, Label: "2/4", Segment: "1/4:1/2", RegisteredAt: start})
		if !errors.Is(err, ErrSegmentTaken) || !strings.Contains(err.Error(), "host-1") {
			t.Errorf("a segment registered twice: got %v, want ErrSegmentTaken naming host-1", err)
		}
		again := &Run{Target: "db", Workload: "oltp_point_select", Threads: 4, Status: RunOK, StartedAt: start,
			Part: &Part{SplitID: id, Index: 0}}
		if _, err := s.AddRun(ctx, again); !errors.Is(err, ErrReported) {
			t.Errorf("a segment reported twice: got %v, want ErrReported", err)
		}

		runs, err := s.LooseRuns(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 1 {
			t.Fatalf("got %d runs, want the 3 reports merged into 1", len(runs))
		}
		m := runs[0]
		if m.Status != RunPartial || m.Result.Split == nil || m.Result.Split.Complete != 3 || !strings.Contains(m.Error, "partial, 3 of 4 runners") ||
			!strings.Contains(m.Error, "4/4 never reported") {
			t.Errorf("got status %s, error %q: want partial, 3 of 4, 4/4 never reported", m.Status, m.Error)
		}
		if m.Result.Queries.Total != sum || m.Result.Histogram.Count != sum {
			t.Errorf("got %d queries, %d latencies, want %d", m.Result.Queries.Total, m.Result.Histogram.Count, sum)
		}
		if got, want := m.Result.LatencyMS.P99, result.LatencyOf(all, 95).P99; got != want {
			t.Errorf("merged p99 %g, want %g (one histogram of every sample)", got, want)
		}
		if len(m.Result.Intervals) != 3 || m.Result.Intervals[0].QPS != 600 {
			t.Errorf("intervals %+v: want 3 seconds of 600 qps", m.Result.Intervals)
		}
		byID, err := s.RunsByID(ctx, []int64{m.ID})
		if err != nil || len(byID) != 1 || byID[0].Result.Queries.Total != sum {
			t.Errorf("RunsByID(%d): got %+v, %v, want the merged run", m.ID, byID, err)
		}

		if _, ok, err := s.GetMark(ctx, id, "data-ready:a:k:1"); ok || err != nil {
			t.Errorf("a mark not set: got %v, %v", ok, err)
		}
		resume := start.Add(time.Minute)
		if err := s.SetMark(ctx, id, Mark{Name: "data-ready:a:k:1", ResumeAt: resume}); err != nil {
			t.Fatal(err)
		}
		if mk, ok, err := s.GetMark(ctx, id, "data-ready:a:k:1"); !ok || err != nil || !mk.ResumeAt.Equal(resume) {
			t.Errorf("mark: got %+v, %v, %v, want resume at %v", mk, ok, err, resume)
		}
	})
}

// A split sweep: the first runner to join creates the sweep every
// runner's steps go to.
func TestContractSplitSweep(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		sw := &Sweep{Name: "split", Plan: "p", StartedAt: time.Now(), Steps: 2, ClientHost: "h", Tool: "t"}
		a := &Split{Key: "sweep-key", Kind: SplitSweep, Sequence: "0,1/2,1", Runners: 2}
		if err := s.JoinSplit(ctx, a, sw, []Target{{Name: "x", Role: "control"}}); err != nil {
			t.Fatal(err)
		}
		b := &Split{Key: "sweep-key", Kind: SplitSweep, Sequence: "0,1/2,1", Runners: 2}
		if err := s.JoinSplit(ctx, b, &Sweep{Name: "other"}, nil); err != nil {
			t.Fatal(err)
		}
		if a.SweepID == 0 || b.SweepID != a.SweepID {
			t.Fatalf("sweeps %d and %d: want one, shared", a.SweepID, b.SweepID)
		}
		list, err := s.Sweeps(ctx)
		if err != nil || len(list) != 1 || list[0].Name != "split" {
			t.Errorf("sweeps: got %+v, %v, want the first runner's alone", list, err)
		}
	})
}
