package wire

import (
	"bytes"
	"context"
	"encoding/binary"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

// TestRelayPreparedStatements relays a client's COM_STMT_PREPARE and
// COM_STMT_EXECUTE as a proxy does: Prepared tells the statement's id and
// parameters, and the binary rows decoded on the way read as the same
// statement's text rows do (a proxy compares the two alike).
func TestRelayPreparedStatements(t *testing.T) {
	c := dial(t)
	createRows(t, c, nil)
	const q = "SELECT * FROM wire_rows ORDER BY id"
	var text collect
	if err := c.SendQuery(q); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadReply(&text); err != nil {
		t.Fatal(err)
	}

	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	caps, ext := c.Capabilities()
	rc, err := Dial(context.Background(), tg.Config(tg.Endpoints()[0], tg.DB), Options{As: &Handshake{Caps: caps, ExtCaps: ext &^ extCapCacheMetadata, Collation: 45}})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	var out bytes.Buffer
	if _, err := rc.Relay(append([]byte{ComStmtPrepare}, "SELECT ? + ?"...), &out, nil); err != nil {
		t.Fatalf("relay a prepare: %v", err)
	}
	if id, params := rc.Prepared(); id == 0 || params != 2 {
		t.Errorf("after preparing SELECT ? + ?: got id %d, %d parameters, want an id and 2", id, params)
	}
	if _, err := rc.Relay(append([]byte{ComStmtPrepare}, q...), &out, nil); err != nil {
		t.Fatalf("relay a prepare: %v", err)
	}
	id, params := rc.Prepared()
	if params != 0 {
		t.Errorf("got %d parameters, want 0", params)
	}
	exec := binary.LittleEndian.AppendUint32([]byte{ComStmtExecute}, id)
	exec = append(exec, 0, 1, 0, 0, 0)
	// Twice, and once without a reader: the relay itself must not change.
	var sent []byte
	for run := range 3 {
		var bin collect
		var r RowReader = &bin
		if run == 2 {
			r = nil
		}
		out.Reset()
		res, err := rc.Relay(exec, &out, r)
		if err != nil {
			t.Fatalf("relay execution %d: %v", run+1, err)
		}
		if res.Rows != 3 {
			t.Fatalf("relay execution %d: got %d rows, want 3", run+1, res.Rows)
		}
		if sent == nil {
			sent = bytes.Clone(out.Bytes())
		} else if !bytes.Equal(out.Bytes(), sent) {
			t.Errorf("relay execution %d: the bytes relayed differ from the first's", run+1)
		}
		if r == nil {
			continue
		}
		if len(bin.rows) != 3 || bin.sets != 1 {
			t.Fatalf("relay execution %d: got %d rows in %d sets decoded, want 3 in 1", run+1, len(bin.rows), bin.sets)
		}
		for i := range text.rows {
			for j := range text.rows[i] {
				if b, x := bin.rows[i][j], text.rows[i][j]; !sameValue(b, x, text.types[j]) {
					t.Errorf("relay execution %d, row %d, %s (%s): got %q in binary, %q as text", run+1, i+1, text.names[j], text.types[j], b, x)
				}
			}
		}
	}
	if rc.Broken() {
		t.Fatal("relay connection broken after the executions")
	}
}

// TestRelayCursor relays an execution that opens a cursor, with and
// without CLIENT_DEPRECATE_EOF: the reply is the columns only, and the
// rows come with COM_STMT_FETCH.
func TestRelayCursor(t *testing.T) {
	c := dial(t)
	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	caps, _ := c.Capabilities()
	for _, eof := range []bool{false, true} {
		hs := &Handshake{Caps: caps &^ capDeprecateEOF, Collation: 45}
		if eof {
			hs.Caps |= capDeprecateEOF
		}
		cfg := tg.Config(tg.Endpoints()[0], tg.DB)
		cfg.ReadTimeout = 5 * time.Second
		rc, err := Dial(context.Background(), cfg, Options{As: hs})
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		var out bytes.Buffer
		if _, err := rc.Relay(append([]byte{ComStmtPrepare}, "SELECT 1 UNION SELECT 2"...), &out, nil); err != nil {
			t.Fatalf("relay a prepare: %v", err)
		}
		id, _ := rc.Prepared()
		exec := binary.LittleEndian.AppendUint32([]byte{ComStmtExecute}, id)
		exec = append(exec, 1, 1, 0, 0, 0) // CURSOR_TYPE_READ_ONLY
		if _, err := rc.Relay(exec, &out, &collect{}); err != nil {
			t.Fatalf("deprecate EOF %v: relay an execution with a cursor: %v", eof, err)
		}
		fetch := binary.LittleEndian.AppendUint32([]byte{ComStmtFetch}, id)
		fetch = binary.LittleEndian.AppendUint32(fetch, 10)
		res, err := rc.Relay(fetch, &out, nil)
		if err != nil || res.Rows != 2 {
			t.Fatalf("deprecate EOF %v: relay the fetch: got %d rows, %v, want 2", eof, res.Rows, err)
		}
	}
}
