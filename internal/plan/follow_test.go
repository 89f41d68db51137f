package plan

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/usage"
)

const followBase = "source: {name: a, url: \"mysql://u@h:1/app\"}\ncandidates: [{name: b, url: \"mysql://u@h:2/app\"}]\n" +
	"data:\n  copy: {allow-write: true}\n"

func TestParseRehearsalFollow(t *testing.T) {
	tests := []struct {
		name, src string
		follow    *Follow
		cutover   *Cutover
	}{
		{"follow alone", followBase + "follow:\n", &Follow{Line: 5}, nil},
		{"follow with defaults", followBase + "follow: {}\n", &Follow{Line: 5}, nil},
		{"follow's options", followBase + "follow:\n  workers: 8\n  batch_rows: 500\n  server-id: 4242\n",
			&Follow{Workers: 8, BatchRows: 500, ServerID: 4242, Line: 5}, nil},
		{"cutover", followBase + "follow: {workers: 2}\ncutover:\n  allow-set-global: true\n  max-lag: 500ms\n  lag_wait: 90\n  verify: none\n  kill-writers: true\n",
			&Follow{Workers: 2, Line: 5}, &Cutover{MaxLag: 500 * time.Millisecond, LagWait: 90 * time.Second, Verify: CutoverVerifyNone, KillWriters: true, AllowSetGlobal: true, Line: 6}},
		{"cutover's defaults", followBase + "follow:\ncutover: {allow_set_global: true}\n",
			&Follow{Line: 5}, &Cutover{Verify: CutoverVerifyFull, AllowSetGlobal: true, Line: 6}},
		{"cutover skipped needs nothing", "source: {name: a, url: \"mysql://u@h:1/app\"}\ncandidates: [{name: b, url: \"mysql://u@h:2/app\"}]\n" +
			"cutover: {max-lag: 1s}\nsteps:\n  cutover: {skip: true}\n", nil, &Cutover{MaxLag: time.Second, Verify: CutoverVerifyFull, Line: 3}},
		{"databases named", "source: {name: a, url: \"mysql://u@h:1/\"}\ncandidates: [{name: b, url: \"mysql://u@h:2/\"}]\n" +
			"databases: [app]\ndata:\n  copy: {allow-write: true}\nfollow:\n", &Follow{Line: 6}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := ParseRehearsal("p.yaml", []byte(tc.src), func(string) string { return "" }, bench.Grammar{})
			if err != nil {
				t.Fatal(err)
			}
			if (r.Follow == nil) != (tc.follow == nil) || r.Follow != nil && *r.Follow != *tc.follow {
				t.Errorf("follow: got %+v, want %+v", r.Follow, tc.follow)
			}
			if (r.Cutover == nil) != (tc.cutover == nil) || r.Cutover != nil && *r.Cutover != *tc.cutover {
				t.Errorf("cutover: got %+v, want %+v", r.Cutover, tc.cutover)
			}
		})
	}
	if got, want := strings.Join(StepNames, " "), "check copy follow verify analyze vars replay sweep capacity cutover readiness"; got != want {
		t.Errorf("steps: got %s, want %s", got, want)
	}
}

// TestParseRehearsalFollowErrors: a follow or cutover step the plan
// cannot run is bad usage (exit 2) naming the line and the option.
func TestParseRehearsalFollowErrors(t *testing.T) {
	present := "source: {name: a, url: \"mysql://u@h:1/app\"}\ncandidates: [{name: b, url: \"mysql://u@h:2/app\"}]\n"
	cases := []struct {
		name, src string
		want      []string
	}{
		{"follow without a copy", present + "follow: {workers: 2}\n", []string{"p.yaml:3: follow: the follower starts from the position the copy records: it needs data: copy"}},
		{"copy skipped", followBase + "follow:\nsteps:\n  copy: {skip: true}\n", []string{"p.yaml:5: follow: the follower starts from the position the copy records, and steps: copy: {skip: true}"}},
		{"unknown option", followBase + "follow:\n  wrokers: 2\n", []string{`p.yaml:6: unknown key "wrokers" in follow (did you mean "workers"?); valid keys: workers, batch-rows, server-id`}},
		{"workers out of range", followBase + "follow: {workers: 0}\n", []string{"p.yaml:5: follow: workers: 0: want 1 to 256"}},
		{"batch-rows not a number", followBase + "follow:\n  batch-rows: many\n", []string{`p.yaml:6: follow: batch-rows: "many" is not a whole number`}},
		{"follow not a mapping", followBase + "follow: [1]\n", []string{"p.yaml:5: follow: want a mapping of the follower's options"}},
		{"a subset", "source: {name: a, url: \"mysql://u@h:1/app\"}\ncandidates: [{name: b, url: \"mysql://u@h:2/app\"}]\n" +
			"data:\n  copy:\n    allow-write: true\n    where: \"app.orders: id < 10\"\nfollow:\n", []string{"p.yaml:6: data: copy: where: a followed copy is of whole databases"}},
		{"no snapshot", "source: {name: a, url: \"mysql://u@h:1/app\"}\ncandidates: [{name: b, url: \"mysql://u@h:2/app\"}]\n" +
			"data:\n  copy:\n    allow-write: true\n    consistency: none\nfollow:\n", []string{"p.yaml:6: data: copy: consistency: none: the follower starts from the position"}},
		{"no database", "source: {name: a, url: \"mysql://u@h:1/\"}\ncandidates: [{name: b, url: \"mysql://u@h:2/\"}]\ndata:\n  copy: {allow-write: true}\nfollow:\n",
			[]string{"p.yaml:5: follow: name the databases to follow"}},
		{"cutover without follow", followBase + "cutover: {allow-set-global: true}\n", []string{"p.yaml:5: cutover: the switch is rehearsed with the rehearsal's follower at work: add follow:"}},
		{"cutover without allow-set-global", followBase + "follow:\ncutover: {max-lag: 1s}\n", []string{"p.yaml:6: cutover: allow-set-global: the cutover sets read_only = ON on the source"}},
		{"allow-set-global false", followBase + "follow:\ncutover:\n  allow-set-global: false\n", []string{"p.yaml:6: cutover: allow-set-global: the cutover sets read_only"}},
		{"bad verify", followBase + "follow:\ncutover:\n  allow-set-global: true\n  verify: some\n", []string{`p.yaml:8: cutover: verify: "some": want full`}},
		{"bad max-lag", followBase + "follow:\ncutover:\n  allow-set-global: true\n  max-lag: soon\n", []string{`p.yaml:8: cutover: max-lag: "soon": want a time > 0`}},
		{"unknown cutover option", followBase + "follow:\ncutover:\n  allow-set-global: true\n  kill-writer: true\n", []string{`p.yaml:8: unknown key "kill-writer" in cutover (did you mean "kill-writers"?)`}},
		{"every problem", present + "follow: {workers: 300}\ncutover: {verify: maybe}\n", []string{
			"p.yaml:3: follow: the follower starts from the position the copy records", "p.yaml:3: follow: workers: 300: want 1 to 256",
			`p.yaml:4: cutover: verify: "maybe"`, "p.yaml:4: cutover: allow-set-global:"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseRehearsal("p.yaml", []byte(c.src), func(string) string { return "" }, bench.Grammar{})
			var pe *Error
			if !errors.As(err, &pe) || !usage.Is(err) {
				t.Fatalf("got %v, want a plan error that is bad usage", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to hold %q", err, w)
				}
			}
		})
	}
}
