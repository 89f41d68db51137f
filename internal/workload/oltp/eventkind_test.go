package oltp

import (
	"testing"

	"github.com/shakedown/shakedown/internal/workload"
)

// TestEventKind checks what each script's event is as the server counts
// it, which capacity uses to read a production peak in the right figure.
func TestEventKind(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want workload.EventKind
	}{
		{"oltp_read_write", nil, workload.EventTransaction},
		{"oltp_read_only", nil, workload.EventTransaction},
		{"oltp_write_only", nil, workload.EventTransaction},
		{"oltp_read_only", []string{"--skip-trx"}, ""},
		{"oltp_read_only", []string{"--skip-trx", "--point-selects=1", "--range-selects=off"}, workload.EventStatement},
		{"oltp_point_select", nil, workload.EventStatement},
		{"oltp_insert", nil, workload.EventStatement},
		{"oltp_update_index", nil, workload.EventStatement},
		{"oltp_update_index", []string{"--index-updates=2"}, ""},
		{"oltp_update_non_index", nil, workload.EventStatement},
		{"oltp_delete", nil, workload.EventStatement},
		{"select_random_points", nil, workload.EventStatement},
		{"select_random_ranges", nil, workload.EventStatement},
		{"bulk_insert", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := script(t, c.name, c.args)
			k, ok := g.(workload.EventKinder)
			if !ok {
				t.Fatalf("%s: got no EventKinder, want one", c.name)
			}
			if got := k.EventKind(); got != c.want {
				t.Errorf("%s %v: got %q, want %q", c.name, c.args, got, c.want)
			}
		})
	}
}

// TestReadOnly checks which scripts' events only read, which sets how
// many loops drive them on cores shared with the server.
func TestReadOnly(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want bool
	}{
		{"oltp_point_select", nil, true},
		{"oltp_read_only", nil, true},
		{"oltp_read_only", []string{"--skip-trx"}, true},
		{"select_random_points", nil, true},
		{"select_random_ranges", nil, true},
		{"oltp_read_write", nil, false},
		{"oltp_read_write", []string{"--index-updates=0", "--non-index-updates=0", "--delete-inserts=0"}, true},
		{"oltp_read_write", []string{"--index-updates=0", "--non-index-updates=0", "--delete-inserts=0", "--point-selects=0", "--range-selects=off"}, false},
		{"oltp_write_only", nil, false},
		{"oltp_insert", nil, false},
		{"oltp_update_index", nil, false},
		{"oltp_update_non_index", nil, false},
		{"oltp_delete", nil, false},
		{"bulk_insert", nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := script(t, c.name, c.args)
			r, ok := g.(workload.ReadOnlyer)
			if !ok {
				t.Fatalf("%s: got no ReadOnlyer, want one", c.name)
			}
			if got := r.ReadOnly(); got != c.want {
				t.Errorf("%s %v: got %v, want %v", c.name, c.args, got, c.want)
			}
		})
	}
}

// script is the workload name with its options set from args.
func script(t *testing.T, name string, args []string) workload.Generator {
	t.Helper()
	m, ok := workload.Lookup(name)
	if !ok {
		t.Fatalf("got no workload %s, want one", name)
	}
	g := m.New()
	if f, ok := g.(workload.Flagser); ok && f.Flags() != nil {
		if err := f.Flags().Parse(args); err != nil {
			t.Fatal(err)
		}
	}
	return g
}
