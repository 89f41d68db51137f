package store

import (
	"context"
	"errors"
	"testing"
)

// A rehearsal and its steps read back as written, on both backends; a
// step run again after a resume keeps both rows.
func TestContractRehearsal(t *testing.T) {
	backends(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		r := &Rehearsal{Name: "app-move", PlanPath: "/p/app.yaml", Plan: "source: {}\n", Tool: "t"}
		id, err := s.AddRehearsal(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		steps := []RehearsalStep{
			{Position: 0, Name: "check", Status: StepDone, Outcome: OutcomeWarn, Ref: "evidence 3", Summary: "0 errors, 1 warning"},
			{Position: 1, Name: "verify", Status: StepFailed, Error: "connect target: refused"},
			{Position: 1, Name: "verify", Status: StepDone, Outcome: OutcomePass, Ref: "evidence 4"},
		}
		for i := range steps {
			steps[i].RehearsalID = id
			if _, err := s.AddRehearsalStep(ctx, &steps[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.SetRehearsalStatus(ctx, id, RehearsalDone, "ready"); err != nil {
			t.Fatal(err)
		}
		got, err := s.GetRehearsal(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Name != r.Name || got.Plan != r.Plan || got.Status != RehearsalDone || got.Verdict != "ready" || got.FinishedAt.IsZero() {
			t.Errorf("rehearsal: got %+v, want %s done, ready, with a finish time", got, r.Name)
		}
		rows, err := s.RehearsalSteps(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(steps) {
			t.Fatalf("steps: got %d, want %d", len(rows), len(steps))
		}
		for i, w := range steps {
			g := rows[i]
			if g.Name != w.Name || g.Status != w.Status || g.Outcome != w.Outcome || g.Ref != w.Ref || g.Error != w.Error || g.Position != w.Position {
				t.Errorf("step %d: got %+v, want %+v", i, g, w)
			}
		}
		list, err := s.Rehearsals(ctx)
		if err != nil || len(list) != 1 || list[0].ID != id {
			t.Errorf("Rehearsals: got %v, %v; want the one rehearsal %d", list, err, id)
		}
		if _, err := s.GetRehearsal(ctx, id+1); !errors.Is(err, ErrNotFound) {
			t.Errorf("GetRehearsal(%d): got %v, want ErrNotFound", id+1, err)
		}
	})
}
