package sweep

import (
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/plan"
)

func TestUnbalanced(t *testing.T) {
	ctl, cand := &plan.Target{Name: "ctl"}, &plan.Target{Name: "cand"}
	both := []*plan.Target{ctl, cand}
	steps := func(ts ...*plan.Target) []plan.Step {
		var out []plan.Step
		for _, x := range ts {
			out = append(out, plan.Step{Target: x})
		}
		return out
	}
	if got := unbalanced(steps(cand, cand), both); !strings.Contains(got, "the steps left are cand's only: they run back to back") {
		t.Errorf("only the candidate's left: got %q, want it said", got)
	}
	for name, todo := range map[string][]plan.Step{"both left": steps(ctl, cand), "none left": nil} {
		if got := unbalanced(todo, both); got != "" {
			t.Errorf("%s: got %q, want nothing said", name, got)
		}
	}
	if got := unbalanced(steps(ctl), []*plan.Target{ctl}); got != "" {
		t.Errorf("one target: got %q, want nothing said", got)
	}
}
