package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/shakedown/shakedown/internal/golden"
	"github.com/shakedown/shakedown/internal/result"
)

// TestConnectionColumn: results that record their client path and TLS
// put a connection column in the environment table, per target, with every
// variant its runs had; without any, the table has no such column (the
// other golden files).
func TestConnectionColumn(t *testing.T) {
	d := fixture(1)
	for i := range d.Runs {
		res := d.Runs[i].Result
		if res == nil {
			continue
		}
		switch d.Runs[i].Target {
		case "durable":
			res.Target.SetConnection(result.ClientWire, false)
		case "tuned":
			// A run from before connections were recorded, then TLS.
			if d.Runs[i].Workload == "oltp_write_only" && d.Runs[i].Threads == 1 {
				continue
			}
			res.Target.SetConnection(result.ClientWire, true)
		case "relaxed":
			res.Target.SetConnection(result.ClientSQL, d.Runs[i].Threads == 16)
		}
	}
	rep := Build(d)
	var b bytes.Buffer
	rep.targetsTable().writeText(&b, "")
	golden.Check(t, "targets-connections.txt", b.Bytes())

	b.Reset()
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Targets []struct {
			Name       string `json:"name"`
			Connection string `json:"connection"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"durable": "wire, no TLS", "relaxed": "database/sql, TLS; database/sql, no TLS", "tuned": "wire, TLS"}
	for _, tg := range doc.Targets {
		if tg.Connection != want[tg.Name] {
			t.Errorf("JSON target %s: got connection %q, want %q", tg.Name, tg.Connection, want[tg.Name])
		}
	}
}
