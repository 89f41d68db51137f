package runner_test

import (
	"bytes"
	"errors"
	"reflect"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/golden"
	"github.com/shakedown/shakedown/internal/histogram"
	"github.com/shakedown/shakedown/internal/ioloop"
	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/wire"
	"github.com/shakedown/shakedown/internal/workload"
)

func hist(ds ...time.Duration) *histogram.Histogram {
	h := histogram.New()
	for _, d := range ds {
		h.Record(d)
	}
	return h
}

// outcome is a run with every figure set, as the runner hands it over.
func outcome() *runner.Outcome {
	ms := time.Millisecond
	return &runner.Outcome{
		Elapsed: 10 * time.Second, Reads: 1400, Writes: 400, Others: 200, Events: 100,
		Errors:      map[uint16]int64{1213: 3, 2013: 1},
		Reconnects:  1,
		Latency:     hist(2*ms, 3*ms, 3*ms, 5*ms, 40*ms),
		ConnectMode: runner.PerEvent, Connects: 100,
		ConnectLatency: hist(ms, 2*ms),
		Statements: []workload.StmtOutcome{
			{Name: "#1 point", Latency: hist(ms, ms, 2*ms), Errors: map[uint16]int64{1213: 3}},
			{Name: "#2 range", Latency: hist(4 * ms), Errors: map[uint16]int64{}},
		},
		Intervals: []runner.Interval{
			{At: 5 * time.Second, AtS: 5, Threads: 4, TPS: 10, QPS: 200, ReadQPS: 140, WriteQPS: 40, OtherQPS: 20,
				LatencyPct: 5.1, LatencyAvg: 3.2, LatencyMax: 40.5, Latency: hist(ms), ErrorsPS: 0.4, ReconnPS: 0.2, ConnPS: 10, Queue: 7},
			{At: 10 * time.Second, AtS: 10, Threads: 4, TPS: 10, QPS: 200, ReadQPS: 140, WriteQPS: 40, OtherQPS: 20,
				LatencyPct: 4.9, LatencyAvg: 3.1, LatencyMax: 6},
		},
		ThreadEvents: []int64{20, 30, 25, 25},
		ThreadTime:   []time.Duration{2 * time.Second, 3 * time.Second, 2500 * ms, 2500 * ms},
		Err:          errors.New("thread 1: lost the server"),
	}
}

// The stored document is result's, converted here from the runner's
// types: a change to the runner must not change what is stored.
func TestStoredDocument(t *testing.T) {
	r, err := outcome().Document("oltp_read_write", 4, 95)
	if err != nil {
		t.Fatal(err)
	}
	r.Tool = "shakedown test"
	r.Target = result.Target{Name: "control", URL: "mysql://bench@127.0.0.1:3306/sbtest", Version: "10.11.9-MariaDB", Flavour: "mariadb"}
	r.StartedAt = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	r.WarmupS = 5
	r.Rate = 100
	r.Options = map[string]string{"threads": "4", "tables": "1"}
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "result.json", b.Bytes())

	back, err := result.Read(&b)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Intervals) != 2 || back.Intervals[0].Queue != 7 || back.Statements[0].Errors.Total != 3 {
		t.Errorf("read back: got %+v, want what was written", back)
	}
}

// A run through an outage says so in the stored document and the summary.
func TestDegradedDocument(t *testing.T) {
	o := outcome()
	o.Err = nil
	o.Availability = runner.Availability{ReconnectAttempts: 14, ReconnectFailures: 12, Unavailable: 2500 * time.Millisecond,
		FirstError: errors.New("connect to 127.0.0.1:3306: connection refused: is the server running and listening there?")}
	r, err := o.Document("oltp_read_write", 4, 95)
	if err != nil {
		t.Fatal(err)
	}
	r.StartedAt = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "result-degraded.json", b.Bytes())
	var s bytes.Buffer
	r.WriteSummary(&s)
	for _, want := range []string{"reconnect attempts:            14, 12 failed", "DEGRADED:", "2.50s", "connection refused"} {
		if !bytes.Contains(s.Bytes(), []byte(want)) {
			t.Errorf("summary lacks %q:\n%s", want, s.String())
		}
	}
}

// A run that the client limited says so, with its figures, in the stored
// document and the summary; one it did not limit keeps its figures in the
// document alone.
func TestClientBoundDocument(t *testing.T) {
	for _, tc := range []struct {
		name      string
		load      runner.ClientLoad
		wantBound bool
		wantLine  bool
	}{
		{"starved", runner.ClientLoad{CPU: 128 * time.Millisecond, Waited: 4572 * time.Millisecond, Wall: time.Second, Cores: 1,
			Lag: 8 * time.Millisecond, LagP99: 67 * time.Millisecond, QueryLatency: 30 * time.Millisecond}, true, true},
		{"at ease", runner.ClientLoad{CPU: 200 * time.Millisecond, Waited: 10 * time.Millisecond, Wall: time.Second, Cores: 4,
			Lag: 5 * time.Microsecond, QueryLatency: time.Millisecond}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := outcome()
			o.Err = nil
			o.Client = tc.load
			r, err := o.Document("oltp_point_select", 400, 95)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := r.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			back, err := result.Read(&b)
			if err != nil {
				t.Fatal(err)
			}
			if back.Client == nil || back.ClientBound() != tc.wantBound || back.Client.Cores != tc.load.Cores {
				t.Fatalf("read back client: got %+v, want bound %v with %d cores", back.Client, tc.wantBound, tc.load.Cores)
			}
			var s bytes.Buffer
			back.WriteSummary(&s)
			if got := bytes.Contains(s.Bytes(), []byte("CLIENT-BOUND:")); got != tc.wantLine {
				t.Errorf("summary has a CLIENT-BOUND line: got %v, want %v:\n%s", got, tc.wantLine, s.String())
			}
			if tc.wantLine {
				for _, want := range []string{"CPU 12.8% of 1 core", "waiting for a CPU 457.2%", "p50 8.000 ms"} {
					if !bytes.Contains(s.Bytes(), []byte(want)) {
						t.Errorf("summary lacks %q:\n%s", want, s.String())
					}
				}
			}
		})
	}
}

// TestStoredIO: what a result records of a plan is what ran: the mode
// asked for and the one it came to, and for loops how many drove the
// threads (never more than the threads), whether they held their
// processors and were bound to CPUs, and what a benchmark tuned.
func TestStoredIO(t *testing.T) {
	cpus := runtime.NumCPU()
	bindOn := client.IOTuning{Bind: ioloop.On} // bound wherever there is a loop for every CPU
	every := client.IOTuning{Loops: 3, Bind: ioloop.Off, Tuning: ioloop.Tuning{Burst: 32, Watch: ioloop.On, HoldOff: true}}
	for _, tc := range []struct {
		name    string
		p       client.IOPlan
		threads int
		want    result.ClientIO
	}{
		{"blocking", client.IOPlan{Mode: "auto", IO: wire.Options{Blocking: true}}, 16, result.ClientIO{Asked: "auto", Mode: "blocking"}},
		{"polled", client.IOPlan{Mode: "polled"}, 16, result.ClientIO{Asked: "polled", Mode: "polled"}},
		{"loops, fewer threads", client.IOPlan{Mode: "loop", IO: wire.Options{Looped: true}, Loops: 4}, 3, result.ClientIO{Asked: "loop", Mode: "loop", Loops: 3}},
		{"held loops, a loop a CPU", client.IOPlan{IO: wire.Options{Looped: true}, Loops: cpus, Hold: true, Tuning: bindOn}, 64,
			result.ClientIO{Asked: "auto", Mode: "loop", Loops: cpus, Held: true, BoundToCPUs: cpus > 1, Tuning: &result.IOTuning{Bind: "on"}}},
		{"every knob", client.IOPlan{Mode: "loop", IO: wire.Options{Looped: true}, Loops: 3, Hold: true, Tuning: every}, 16,
			result.ClientIO{Asked: "loop", Mode: "loop", Loops: 3, Held: true, Tuning: &result.IOTuning{Loops: 3, Bind: "off", Burst: 32, Watch: "on", Hold: "off"}}},
	} {
		if got := runner.StoredIO(tc.p, tc.threads); !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("%s: got %+v (tuning %+v), want %+v (tuning %+v)", tc.name, *got, got.Tuning, tc.want, tc.want.Tuning)
		}
	}
}

// TestStoredTuningReads: the tuning a result records reads as the
// variables that set it, each knob under its own name.
func TestStoredTuningReads(t *testing.T) {
	env := map[string]string{client.EnvLoops: "5", client.EnvBind: "on", client.EnvBurst: "64", client.EnvWatch: "off", client.EnvHold: "off"}
	tune := client.ReadIOTuning(func(k string) string { return env[k] })
	got := runner.StoredIO(client.IOPlan{IO: wire.Options{Looped: true}, Loops: 5, Tuning: tune}, 16).Tuning
	if got == nil {
		t.Fatal("got no tuning recorded, want every knob")
	}
	for name, v := range map[string]string{
		client.EnvLoops: strconv.Itoa(got.Loops), client.EnvBind: got.Bind, client.EnvBurst: strconv.Itoa(got.Burst),
		client.EnvWatch: got.Watch, client.EnvHold: got.Hold,
	} {
		if v != env[name] {
			t.Errorf("%s: recorded %q, want %q", name, v, env[name])
		}
	}
}
