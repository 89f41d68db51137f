package bench

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/runner"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/workload"
	_ "github.com/shakedown/shakedown/internal/workload/all"
)

func TestFindWorkload(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		want  string
		idx   int
		found bool
	}{
		{"plain", []string{"oltp_read_write", "--threads=2"}, "oltp_read_write", 0, true},
		{"sysbench script path", []string{"--threads=2", "/usr/share/sysbench/oltp_point_select.lua"}, "oltp_point_select", 1, true},
		{"unknown", []string{"--threads=2", "oltp_nonsense"}, "oltp_nonsense", 1, false},
		{"none", []string{"--threads=2"}, "", -1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name, idx, found := FindWorkload(tc.args)
			if name != tc.want || idx != tc.idx || found != tc.found {
				t.Errorf("got %q %d %v, want %q %d %v", name, idx, found, tc.want, tc.idx, tc.found)
			}
		})
	}
}

func TestParseBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no workload", nil, "name a workload"},
		{"unknown workload", []string{"oltp_nonsense"}, `unknown workload "oltp_nonsense"`},
		{"unknown option", []string{"ping", "--threadz=2"}, "--threads"},
		{"extra argument", []string{"ping", "stray"}, `unexpected argument "stray"`},
		{"threads", []string{"ping", "--threads=0"}, "--threads must be >= 1"},
		{"no limit", []string{"ping", "--time=0"}, "--time=0 needs --events"},
		{"percentile", []string{"ping", "--percentile=101"}, "--percentile"},
		{"ps mode", []string{"ping", "--db-ps-mode=sometimes"}, "--db-ps-mode"},
		{"client io", []string{"ping", "--client-io=fast"}, "--client-io must be auto, loop, blocking or polled"},
		{"ignore list", []string{"ping", "--mysql-ignore-errors=deadlock"}, `--mysql-ignore-errors: "deadlock" is not an error code`},
		{"connect mode", []string{"ping", "--connect-mode=pooled"}, "--connect-mode"},
		{"metrics address", []string{"ping", "--metrics-addr=9100"}, "--metrics-addr must be HOST:PORT"},
		{"workload option", []string{"ping", "--ping-mode=loud"}, "--ping-mode"},
		{"stall trigger", []string{"ping", "--stall=threads_running>25,qps<fast"}, `--stall: trigger "qps<fast"`},
		{"stall without the sampler", []string{"ping", "--stall", "--monitor=off"}, "--stall needs the sampler"},
		{"stacks without stall", []string{"ping", "--stall-stacks"}, "--stall-stacks needs --stall"},
		{"stall cooldown", []string{"ping", "--stall", "--stall-cooldown=0s"}, "--stall-cooldown must be > 0"},
		{"stall trigger after a space", []string{"ping", "--stall", "threads_running>abc"}, `--stall: trigger "threads_running>abc"`},
		{"a word after a bare stall", []string{"ping", "--stall", "threads_running"}, `unexpected argument "threads_running" (a trigger after --stall compares a figure: --stall 'threads_running>25 for 5s'`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("run", tc.args, &bytes.Buffer{})
			if !usage.Is(err) {
				t.Fatalf("got %v, want a usage error", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestParseStallValue: --stall takes its triggers after a space, as
// every other option takes its value, or after '='; alone it means the
// default trigger, and the argument after it stays where it is unless it
// reads as a trigger. Before, --stall 'threads_running>5 for 2s' was an
// unexpected argument.
func TestParseStallValue(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"after a space", []string{"ping", "--stall", "threads_running>5 for 2s"}, "threads_running>5 for 2s"},
		{"after '='", []string{"ping", "--stall=threads_running>5 for 2s"}, "threads_running>5 for 2s"},
		{"several, after a space", []string{"ping", "--stall", "qps<50%,p99>200ms", "--time=5"}, "qps<50%,p99>200ms"},
		{"default, after a space", []string{"ping", "--stall", "default"}, "default"},
		{"alone, then an option", []string{"ping", "--stall", "--time=5"}, "default"},
		{"alone, last", []string{"ping", "--time=5", "--stall"}, "default"},
		{"alone, then the workload", []string{"--stall", "ping"}, "default"},
		{"after the time", []string{"ping", "--time", "5", "--stall", "p99>1s"}, "p99>1s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j, err := Parse("run", tc.args, &bytes.Buffer{})
			if err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if got := j.Options()["stall"]; got != tc.want {
				t.Errorf("--stall: got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestParseHelp(t *testing.T) {
	var help bytes.Buffer
	if _, err := Parse("run", []string{"ping", "--help"}, &help); !errors.Is(err, ErrHelp) {
		t.Fatalf("got %v, want ErrHelp", err)
	}
	for _, want := range []string{"usage: shakedown run ping", "--ping-mode", "--mysql-host", "--threads"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}

// TestWorkloadHelp: a workload with more to say than its options says it
// in its --help, before them.
func TestWorkloadHelp(t *testing.T) {
	var help bytes.Buffer
	if _, err := Parse("run", []string{"sql", "--help"}, &help); !errors.Is(err, ErrHelp) {
		t.Fatalf("got %v, want ErrHelp", err)
	}
	out := help.String()
	for _, want := range []string{"usage: shakedown run sql", "Placeholders", "{{uniform A B}}", "{{NAME = GENERATOR ...}}", "-- @event", "Options of sql:\n", "--file"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "package documentation") {
		t.Errorf("help sends the reader to the package documentation:\n%s", out)
	}
	if i, j := strings.Index(out, "Placeholders"), strings.Index(out, "Options of sql:"); i > j {
		t.Errorf("got the language after the options (%d > %d), want it before", i, j)
	}
}

func TestParseMakesTheRunConfig(t *testing.T) {
	j, err := Parse("run", []string{"oltp_read_write", "--threads=16", "--time=60", "--rate=100", "--warmup-time=5", "--report-interval=2",
		"--mysql-ignore-errors=all", "--connect-mode=transaction", "--mysql-password=Secret-1", "--json=r.json", "--tables=4"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	rc := j.rc
	if rc.Threads != 16 || rc.Time != time.Minute || rc.Rate != 100 || rc.Warmup != 5*time.Second || rc.Interval != 2*time.Second {
		t.Errorf("got %+v, want the options' values", rc)
	}
	if !rc.Policy.IgnoreAll || rc.ConnectMode != runner.PerEvent {
		t.Errorf("got ignore-all %v and mode %v, want true and transaction", rc.Policy.IgnoreAll, rc.ConnectMode)
	}
	opts := j.Options()
	if opts["tables"] != "4" || opts["threads"] != "16" {
		t.Errorf("options: got tables %q threads %q, want 4 and 16", opts["tables"], opts["threads"])
	}
	for _, secret := range []string{"mysql-password", "target", "json", "store"} {
		if _, ok := opts[secret]; ok {
			t.Errorf("options record %s", secret)
		}
	}
	if j.JSONPath() != "r.json" || j.Threads() != 16 {
		t.Errorf("got json %q threads %d, want r.json and 16", j.JSONPath(), j.Threads())
	}
}

func TestTakes(t *testing.T) {
	tests := []struct {
		workload, option string
		want             bool
	}{
		{"oltp_read_only", "tables", true},
		{"oltp_read_only", "table_size", true},
		{"sql", "tables", false},
		{"sql", "file", true},
		{"sql", "mysql-ignore-errors", true}, // every workload's
		{"oltp_read_only", "tabels", false},
		{"no_such_workload", "tables", false},
	}
	for _, tc := range tests {
		if got := Takes(tc.workload, tc.option); got != tc.want {
			t.Errorf("Takes(%s, %s): got %v, want %v", tc.workload, tc.option, got, tc.want)
		}
	}
}

// TestHelpSections: every option of every workload's command line is
// listed in one of the help's sections, none under Other options, and
// each once.
func TestHelpSections(t *testing.T) {
	for _, wl := range workload.Names() {
		var b strings.Builder
		_, _, err := ParseArgs("run", []string{wl, "--help"}, &b)
		if !errors.Is(err, ErrHelp) {
			t.Fatalf("%s --help: got %v, want ErrHelp", wl, err)
		}
		out := b.String()
		if strings.Contains(out, "Other options:") {
			t.Errorf("%s --help: an option is in no section:\n%s", wl, out[strings.Index(out, "Other options:"):])
		}
		for _, want := range []string{"\nLoad and time:\n", "\nTarget and connection", "\nOutput and store:\n", "\nSplit load", "\nDiagnostics:\n", "--threads int", "--stall-max int", "--segment string"} {
			if strings.Count(out, want) != 1 {
				t.Errorf("%s --help: got %q %d times, want once", wl, want, strings.Count(out, want))
			}
		}
	}
	var b strings.Builder
	writeHelp(&b, "run")
	if out := b.String(); strings.Contains(out, "Other options:") || !strings.Contains(out, "\nDiagnostics:\n") {
		t.Errorf("help run: want every option in a section:\n%s", out)
	}
}
