package check

import (
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/schema"
)

// TestKeyless names the tables whose row changes cannot be matched to one
// row: no primary key, and no unique key on NOT NULL columns.
func TestKeyless(t *testing.T) {
	tables := map[string]*schema.Table{
		"app.pk":       {Indexes: []*schema.Index{{Name: "PRIMARY", Primary: true, Unique: true}}},
		"app.unique":   {Indexes: []*schema.Index{{Name: "u", Unique: true}}},
		"app.nullable": {Indexes: []*schema.Index{{Name: "u", Unique: true, Nullable: true}}},
		"app.heap":     {},
	}
	got := keyless(tables)
	if want := []string{"app.heap", "app.nullable"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("got %v, want %v", got, want)
	}
}
