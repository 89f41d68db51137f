package capacity

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/workload"
)

func TestSplitArgs(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.StringArray("slo", nil, "")
	fs.StringArray("target", nil, "")
	own, rest := SplitArgs(fs, []string{"oltp_point_select", "--slo", "p99<=1ms", "--threads=4", "--target=mysql://a", "--tables", "2", "--help"})
	if want := []string{"--slo", "p99<=1ms", "--target=mysql://a", "--help"}; !reflect.DeepEqual(own, want) {
		t.Errorf("own: got %q, want %q", own, want)
	}
	if want := []string{"oltp_point_select", "--threads=4", "--tables", "2"}; !reflect.DeepEqual(rest, want) {
		t.Errorf("rest: got %q, want %q", rest, want)
	}
}

func TestPlanBadInput(t *testing.T) {
	slo := SLO{Latency: []Limit{{99, time.Millisecond}}}
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"rate", Config{Args: []string{"oltp_point_select", "--rate=100"}, Options: Options{SLO: slo}}, "--rate cannot be given"},
		{"time", Config{Args: []string{"oltp_point_select", "--time", "5"}, Options: Options{SLO: slo}}, "--step-time"},
		{"no slo", Config{Args: []string{"oltp_point_select"}}, "--slo is required"},
		{"bad workload option", Config{Args: []string{"oltp_point_select", "--tables=x"}, Options: Options{SLO: slo}}, "--tables"},
		{"twice", Config{Args: []string{"oltp_point_select"}, Targets: []string{"mysql://u@h:1/db", "mysql://u@h:1/db"}, Options: Options{SLO: slo}}, "given twice"},
		{"control", Config{Args: []string{"oltp_point_select"}, Targets: []string{"mysql://u@h:1/db"}, Control: "x", Options: Options{SLO: slo}}, `--control "x" is not a target`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Plan(tc.cfg)
			if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a usage error that says %q", err, tc.want)
			}
		})
	}
}

func TestPlanNamesTargets(t *testing.T) {
	slo := SLO{Latency: []Limit{{99, time.Millisecond}}}
	got, err := Plan(Config{Args: []string{"oltp_point_select"}, Targets: []string{"durable=mysql://u@h:1/db", "mysql://u@h:2/db"}, Options: Options{SLO: slo}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tg := range got {
		names = append(names, tg.Name)
		if tg.Event != workload.EventStatement {
			t.Errorf("%s: got event %q, want %q (oltp_point_select runs one SELECT an event)", tg.Name, tg.Event, workload.EventStatement)
		}
	}
	if want := []string{"durable", "mysql://u@h:2/db"}; !reflect.DeepEqual(names, want) {
		t.Errorf("got names %q, want %q", names, want)
	}
}
