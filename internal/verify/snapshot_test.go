package verify

import (
	"context"
	"database/sql"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/schema"
)

// TestSnapshotOfFailure: a read transaction that cannot open is no
// Snapshot at all, so that no one rolls back a nil transaction.
func TestSnapshotOfFailure(t *testing.T) {
	db, err := sql.Open("mysql", "u@tcp(127.0.0.1:1)/db?timeout=200ms")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	snap, err := snapshotOf(ctx, &schema.Side{Role: "source", DB: db})
	if err == nil {
		t.Fatal("got no error from a server that is not there, want one")
	}
	if snap != nil {
		t.Fatalf("got Snapshot %#v, want nil", snap)
	}
}
