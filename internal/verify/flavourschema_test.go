package verify

import (
	"maps"
	"slices"
	"testing"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
)

// A server that reads information_schema one database a query (vtgate)
// gets the same tables as one that takes a list, and a gateway's storage
// beneath is read from @@global.version.
func TestSchemaOneDatabaseAQuery(t *testing.T) {
	p := newPair(t)
	p.both(t, "CREATE TABLE a (id INT PRIMARY KEY, note TEXT)", "CREATE TABLE b (id INT PRIMARY KEY, a INT, KEY (a))")
	ctx := testCtx(t)
	dbs := []string{p.src.DB, p.dst.DB}
	listed, err := schema.Load(ctx, p.srcSide, dbs)
	if err != nil {
		t.Fatal(err)
	}
	each := *p.srcSide
	each.Server = target.Server{Version: "8.4.6-Vitess", Flavour: flavour.Vitess, Storage: p.srcSide.Server.Flavour}
	one, err := schema.Load(ctx, &each, dbs)
	if err != nil {
		t.Fatal(err)
	}
	got, want := slices.Sorted(maps.Keys(one)), slices.Sorted(maps.Keys(listed))
	if len(want) != 4 || !slices.Equal(got, want) {
		t.Fatalf("one database a query: got tables %v, want %v (4)", got, want)
	}
	for name, tb := range listed {
		if d := schema.Compare(tb, one[name]); len(d) != 0 {
			t.Errorf("%s: read one database a query, differs: %v", name, d)
		}
	}
	if b := flavour.Beneath(ctx, p.srcDB, flavour.Vitess); b != p.srcSide.Server.Flavour {
		t.Errorf("Beneath on %s: got %q, want %q", p.srcSide.Server.Flavour, b, p.srcSide.Server.Flavour)
	}
	if b := flavour.Beneath(ctx, p.srcDB, flavour.MariaDB); b != "" {
		t.Errorf("Beneath of a server that is no gateway: got %q, want none", b)
	}
}
