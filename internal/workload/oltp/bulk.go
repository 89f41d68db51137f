package oltp

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"unsafe"

	"github.com/shakedown/shakedown/internal/workload"
)

// bulkPacketSize is the largest multi-row INSERT sysbench builds, in bytes,
// counting a terminating NUL.
const bulkPacketSize = 512 * 1024

// bulkState keeps each thread's count of rows sent across workers, so a
// worker made again after a reconnect goes on after the last row the server
// got, as sysbench's per-thread counter does.
type bulkState struct {
	mu   sync.Mutex
	next map[int]int64 // thread id -> rows inserted so far
}

func (b *bulkState) load(id int) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.next[id]
}

func (b *bulkState) store(id int, n int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.next == nil {
		b.next = map[int]int64{}
	}
	b.next[id] = n
}

// bulkWorker runs bulk_insert.lua: each event appends the row (n,n) to a
// multi-row INSERT into the thread's own table sbtest<id+1>; the INSERT is
// sent when the next row would not fit in 512 KiB, and at Finish.
type bulkWorker struct {
	g      *generator
	id     int
	conn   workload.Conn
	prefix int   // length of "INSERT INTO sbtestN VALUES"
	rows   int   // rows in buf
	n      int64 // number of the last row appended to buf
	buf    []byte
}

func (g *generator) newBulkWorker(env *workload.WorkerEnv) *bulkWorker {
	w := &bulkWorker{g: g, id: env.ID, conn: env.Conn, n: g.bulk.load(env.ID)}
	w.buf = make([]byte, 0, bulkPacketSize)
	w.buf = append(w.buf, "INSERT INTO sbtest"...)
	w.buf = strconv.AppendInt(w.buf, int64(env.ID+1), 10)
	w.buf = append(w.buf, " VALUES"...)
	w.prefix = len(w.buf)
	return w
}

func (w *bulkWorker) Event(ctx context.Context) error {
	n := w.n + 1
	var row [32]byte
	r := append(row[:0], '(')
	r = strconv.AppendInt(r, n, 10)
	r = append(r, ',')
	r = strconv.AppendInt(r, n, 10)
	r = append(r, ')')
	sep := 0
	if w.rows > 0 {
		sep = 1
	}
	if len(w.buf)+len(r)+1+sep > bulkPacketSize {
		if err := w.flush(ctx); err != nil {
			return err
		}
		sep = 0
	}
	if sep == 1 {
		w.buf = append(w.buf, ',')
	}
	w.buf = append(w.buf, r...)
	w.rows++
	w.n = n
	return nil
}

// flush sends the pending rows, if any. When the INSERT fails its rows are
// dropped and numbered again, so the next INSERT starts after the last row
// the server has.
func (w *bulkWorker) flush(ctx context.Context) error {
	if w.rows == 0 {
		return nil
	}
	// The query shares w.buf, untouched until the call returns.
	q := unsafe.String(unsafe.SliceData(w.buf), len(w.buf))
	_, err := w.conn.Exec(ctx, q)
	if err != nil {
		w.n -= int64(w.rows)
	} else {
		w.g.bulk.store(w.id, w.n)
	}
	w.buf = w.buf[:w.prefix]
	w.rows = 0
	return err
}

// Finish sends the rows still pending, as sysbench's thread_done does.
func (w *bulkWorker) Finish(ctx context.Context) error {
	return w.flush(ctx)
}

// bulkPrepare creates bulk_insert.lua's tables: one per thread.
func bulkPrepare(ctx context.Context, env *workload.PrepareEnv) error {
	for i := 1; i <= max(env.Threads, 1); i++ {
		fmt.Fprintf(env.Out, "Creating table 'sbtest%d'...\n", i)
		if _, err := env.DB.ExecContext(ctx, bulkCreateTableSQL(i)); err != nil {
			return fmt.Errorf("create table sbtest%d: %w", i, err)
		}
	}
	return nil
}

// bulkCleanup drops bulk_insert.lua's tables.
func bulkCleanup(ctx context.Context, env *workload.PrepareEnv) error {
	return dropTables(ctx, env, max(env.Threads, 1))
}
