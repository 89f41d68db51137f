package monitor

import (
	"context"
	"testing"
)

const mysql80Status = `
=====================================
2026-01-02 03:04:05 0x7f InnoDB MONITOR OUTPUT
=====================================
------------
TRANSACTIONS
------------
Trx id counter 123456
Purge done for trx's n:o < 123400 undo n:o < 0 state: running but idle
History list length 2345
---
LOG
---
Log sequence number          98765432
Log buffer assigned up to    98765432
Log buffer completed up to   98765432
Log written up to            98765432
Log flushed up to            98765432
Added dirty pages up to      98765432
Pages flushed up to          98000000
Last checkpoint at           97000000
`

const mysql57Status = `
History list length 17
---
LOG
---
Log sequence number 5000
Log flushed up to   5000
Pages flushed up to 4000
Last checkpoint at  3000
Max checkpoint age    80826164
`

func TestParseInnoDBStatus(t *testing.T) {
	cases := []struct {
		name string
		text string
		want map[string]float64
	}{
		{"MySQL 8.0", mysql80Status, map[string]float64{"innodb.history_list_length": 2345, "innodb.checkpoint_age": 1765432}},
		{"MySQL 5.7 / Percona", mysql57Status, map[string]float64{"innodb.history_list_length": 17, "innodb.checkpoint_age": 2000, "innodb.checkpoint_max_age": 80826164}},
		{"nothing known", "no figures here", map[string]float64{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := parseInnoDBStatus(tc.text)
			if len(got) != len(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			for k, w := range tc.want {
				if got[k] != w {
					t.Errorf("%s: got %g, want %g", k, got[k], w)
				}
			}
		})
	}
}

// TestInnoDBSourceQuietOnMariaDB checks that a server whose status already
// has the figures is not asked for the engine status.
func TestInnoDBSourceQuietOnMariaDB(t *testing.T) {
	db, _ := openTest(t)
	q := NewOwnQuerier(db)
	r := &Reading{Values: map[string]float64{}}
	ctx := context.Background()
	if err := (StatusSource{}).Read(ctx, q, r); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Values["Innodb_history_list_length"]; !ok {
		t.Skip("this server's status lacks Innodb_history_list_length")
	}
	before := q.Statements()
	if err := (&InnoDBSource{}).Read(ctx, q, r); err != nil {
		t.Fatal(err)
	}
	if got := q.Statements() - before; got != 0 {
		t.Errorf("statements sent: got %d, want 0", got)
	}
}

// TestInnoDBSourceReadsEngineStatus forces the engine status path against
// the real server.
func TestInnoDBSourceReadsEngineStatus(t *testing.T) {
	db, _ := openTest(t)
	q := NewOwnQuerier(db)
	r := &Reading{Values: map[string]float64{}}
	if err := (&InnoDBSource{}).Read(context.Background(), q, r); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Values["innodb.history_list_length"]; !ok {
		t.Errorf("got %v, want innodb.history_list_length", r.Values)
	}
	if _, ok := r.Values["innodb.checkpoint_age"]; !ok {
		t.Errorf("got %v, want innodb.checkpoint_age", r.Values)
	}
}
