package capacity

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseSLO(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
		want   SLO
	}{
		{"p99", []string{"p99<=20ms"}, SLO{Latency: []Limit{{99, 20 * time.Millisecond}}}},
		{"fraction percentile", []string{"p99.9<=1.5s"}, SLO{Latency: []Limit{{99.9, 1500 * time.Millisecond}}}},
		{"several in one", []string{"p50<=2ms, p99<=20ms,errors<=0.1%"},
			SLO{Latency: []Limit{{50, 2 * time.Millisecond}, {99, 20 * time.Millisecond}}, ErrorPct: 0.1, ErrorSet: true}},
		{"several flags", []string{"p95<=10ms", "errors<=0%", "P99 <= 500us"},
			SLO{Latency: []Limit{{95, 10 * time.Millisecond}, {99, 500 * time.Microsecond}}, ErrorSet: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSLO(tc.values)
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestParseSLOBadInput(t *testing.T) {
	for _, tc := range []struct {
		name   string
		values []string
		token  string
		why    string
	}{
		{"no operator", []string{"p99=20ms"}, "p99=20ms", "no <="},
		{"less than", []string{"p99<20ms"}, "p99<20ms", "no <="},
		{"no unit", []string{"p99<=20"}, "p99<=20", "not a positive duration"},
		{"zero duration", []string{"p99<=0s"}, "p99<=0s", "not a positive duration"},
		{"percentile 100", []string{"p100<=1s"}, "p100<=1s", "not a percentile"},
		{"percentile word", []string{"pmax<=1s"}, "pmax<=1s", "not a percentile"},
		{"unknown figure", []string{"mean<=1s"}, "mean<=1s", "unknown figure"},
		{"errors without %", []string{"p99<=1s,errors<=0.1"}, "errors<=0.1", "ends in %"},
		{"errors above 100", []string{"p99<=1s,errors<=101%"}, "errors<=101%", "from 0 to 100"},
		{"twice", []string{"p99<=1s", "p99<=2s"}, "p99<=2s", "given twice"},
		{"only errors", []string{"errors<=1%"}, "errors<=1%", "no latency objective"},
		{"empty", []string{"p99<=1s,,"}, "p99<=1s,,", "empty objective"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSLO(tc.values)
			var se *SLOError
			if !errors.As(err, &se) {
				t.Fatalf("got error %v, want an *SLOError", err)
			}
			if se.Token != tc.token {
				t.Errorf("got token %q, want %q", se.Token, tc.token)
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.why) || !strings.Contains(msg, SLOForm) || !strings.Contains(msg, "--slo") {
				t.Errorf("got message %q, want it to name --slo, say %q and show the accepted form", msg, tc.why)
			}
		})
	}
}

// FuzzParseSLO: whatever the input, ParseSLO either fails with the
// accepted form in its message or returns an SLO that reads back the same
// from its own String.
func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"p99<=20ms", "p50<=1ms,p99.9<=1s,errors<=0.5%", "errors<=1%", "p99<20ms", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO([]string{s})
		if err != nil {
			if !strings.Contains(err.Error(), SLOForm) {
				t.Fatalf("error %q lacks the accepted form", err)
			}
			return
		}
		back, err := ParseSLO([]string{slo.String()})
		if err != nil {
			t.Fatalf("%q parsed as %q, which does not parse: %v", s, slo.String(), err)
		}
		if !reflect.DeepEqual(back, slo) {
			t.Fatalf("%q: got %+v back from %q, want %+v", s, back, slo.String(), slo)
		}
	})
}
