package monitor

import (
	"context"
	"database/sql"
	"os"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// openTest opens one connection to the shared test server.
func openTest(t *testing.T) (*sql.DB, target.Endpoint) {
	t.Helper()
	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	ep := tg.Endpoints()[0]
	db, err := tg.OpenNoDB(ep, 1)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db, ep
}

func TestParseStatusValue(t *testing.T) {
	cases := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"123", 123, true}, {" 4.5 ", 4.5, true}, {"ON", 1, true}, {"off", 0, true},
		{"", 0, false}, {"10.11.19-MariaDB", 0, false}, {"Inactive", 0, false},
	}
	for _, tc := range cases {
		got, ok := parseStatusValue(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseStatusValue(%q): got %g %v, want %g %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestStatusSourceReadsCounters(t *testing.T) {
	db, _ := openTest(t)
	q := NewOwnQuerier(db)
	r := &Reading{Values: map[string]float64{}}
	if err := (StatusSource{}).Read(context.Background(), q, r); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"Questions", "Com_select", "Threads_running", "Uptime", "Innodb_buffer_pool_read_requests"} {
		if _, ok := r.Values[k]; !ok {
			t.Errorf("%s: missing from the reading", k)
		}
	}
	if got := r.Values["own.statements"]; got != 1 {
		t.Errorf("own.statements: got %g, want 1", got)
	}
}

// TestSamplerLeavesOutItsOwnStatements samples an idle server: whatever
// the sampler sends must not show as load.
func TestSamplerLeavesOutItsOwnStatements(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	s := NewSampler(db, Options{Host: &HostOptions{Client: true}})
	if _, ok := s.Next(ctx); ok {
		t.Fatalf("first Next: got a sample, want only the baseline")
	}
	for i := 0; i < 3; i++ {
		smp, ok := s.Next(ctx)
		if !ok {
			t.Fatalf("Next: got no sample")
		}
		if got := smp.Values["qps"]; got != 0 {
			t.Errorf("sample %d: qps got %g, want 0 on an idle server", i, got)
		}
		if got := smp.Values["sel"]; got != 0 {
			t.Errorf("sample %d: sel got %g, want 0 (the sampler sends no SELECT)", i, got)
		}
		if len(smp.Failed) != 0 {
			t.Errorf("sample %d: failed sources %v", i, smp.Failed)
		}
		for _, k := range []string{"threads_connected", "bp_pages_data", "history_list_length", "checkpoint_age"} {
			if _, ok := smp.Values[k]; !ok {
				t.Errorf("sample %d: %s missing", i, k)
			}
		}
	}
	for _, k := range []string{"cpu_user", "client_cpu"} {
		if !pollSample(ctx, s, k) {
			t.Errorf("%s: never sampled", k)
		}
	}
}

// TestSamplerReportsAFailingSource keeps sampling when the server goes
// away: the status source reports its failure, the host source goes on.
func TestSamplerReportsAFailingSource(t *testing.T) {
	db, _ := openTest(t)
	ctx := context.Background()
	s := NewSampler(db, Options{Host: &HostOptions{}})
	s.Next(ctx)
	db.Close()
	smp, ok := s.Next(ctx)
	if !ok {
		t.Fatal("Next: got no sample")
	}
	if smp.Failed["status"] == "" {
		t.Errorf("failed: got %v, want status", smp.Failed)
	}
	st := s.Statuses()
	if st[0].Name != "status" || st[0].Failures != 1 || st[0].Reads != 2 {
		t.Errorf("status source: got %+v, want 2 reads, 1 failure", st[0])
	}
	// CPU shares need a clock tick (10 ms) between readings.
	if !pollSample(ctx, s, "cpu_user") {
		t.Errorf("host figures: got no cpu_user despite the failed status")
	}
}

// pollSample takes samples until one has key, for up to two seconds.
func pollSample(ctx context.Context, s *Sampler, key string) bool {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		if smp, ok := s.Next(ctx); ok {
			if _, has := smp.Values[key]; has {
				return true
			}
		}
	}
	return false
}
