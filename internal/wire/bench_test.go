package wire

import (
	"context"
	"testing"

	"github.com/shakedown/shakedown/internal/wire/wiretest"
)

// BenchmarkPointSelect is the per-query path of a point select against a
// fake server that answers every command with the same canned one-row
// result set without allocating, so that allocs/op is the client's. Run
// with -benchmem; the figure to keep is 0 allocs/op.
func BenchmarkPointSelect(b *testing.B) {
	row := []byte{120}
	for i := range 120 {
		row = append(row, byte('a'+i%26))
	}
	row = append([]byte{0, 0}, row...) // binary row: header and NULL bitmap
	text := packets(1, []byte{1}, column("c"), row[2:], eofOK)
	binary := packets(1, []byte{1, 0}, row, eofOK) // metadata skipped, as MariaDB does
	prepare := packets(1, []byte{0, 1, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0}, column("?"), column("c"))
	srv := wiretest.Start(b, wiretest.Config{AnyPassword: true}, func(s *wiretest.Session) {
		buf := make([]byte, 64<<10)
		for {
			n, err := s.ReadRaw(buf)
			if err != nil || n < 5 {
				return
			}
			var reply []byte
			switch buf[4] {
			case comQuery:
				reply = text
			case comStmtPrepare:
				reply = prepare
			case comStmtExecute:
				reply = binary
			default:
				return
			}
			if s.Write(reply) != nil {
				return
			}
		}
	})
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			c, err := Dial(context.Background(), fakeConfig(srv.Addr()), m.opts)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			c.ext = extCapCacheMetadata // the canned binary reply skips the metadata
			b.Run("text", func(b *testing.B) {
				b.ReportAllocs()
				args := []any{int64(0)}
				var q []byte
				for i := 0; b.Loop(); i++ {
					args[0] = int64(i & 0xffff)
					if q, err = c.Interpolate(q[:0], "SELECT c FROM sbtest1 WHERE id=?", args); err != nil {
						b.Fatal(err)
					}
					if r, err := c.Query(string(q)); err != nil || r.Rows != 1 {
						b.Fatalf("got %+v %v", r, err)
					}
				}
			})
			b.Run("text args", func(b *testing.B) {
				b.ReportAllocs()
				args := []any{int64(0)}
				for i := 0; b.Loop(); i++ {
					args[0] = int64(i & 0xffff)
					if r, err := c.QueryArgs("SELECT c FROM sbtest1 WHERE id=?", args); err != nil || r.Rows != 1 {
						b.Fatalf("got %+v %v", r, err)
					}
				}
			})
			b.Run("prepared", func(b *testing.B) {
				st, err := c.Prepare("SELECT c FROM sbtest1 WHERE id=?")
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				for i := 0; b.Loop(); i++ {
					if r, err := st.Exec(i & 0xffff); err != nil || r.Rows != 1 {
						b.Fatalf("got %+v %v", r, err)
					}
				}
			})
		})
	}
}
