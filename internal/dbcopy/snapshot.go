package dbcopy

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/target"
)

// lockTimeout bounds waiting for the global lock: FLUSH TABLES WITH READ
// LOCK waits for running statements, and everything else waits behind it.
const lockTimeout = 30 * time.Second

// snapshot is the source connections the workers read through.
type snapshot struct {
	conns []*sql.Conn
}

// close ends the snapshots, also after the copy's context is cancelled:
// a rollback of a read-only transaction, bounded in time.
func (s *snapshot) close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, c := range s.conns {
		c.ExecContext(ctx, "ROLLBACK") //nolint:errcheck // the connection is closed next anyway
		c.Close()
	}
}

// openSnapshot opens n worker connections on src. With ConsistencyLock
// they share one point in time (see the package doc) and res records the
// lock and the binary log position there.
func openSnapshot(ctx context.Context, src *sql.DB, f flavour.Name, mode string, n int, res *Result) (*snapshot, error) {
	s := &snapshot{}
	for range n {
		c, err := src.Conn(ctx)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("source: open worker connection: %w", err)
		}
		s.conns = append(s.conns, c)
	}
	if mode == ConsistencyNone {
		res.Consistency = "none: each range read as it was when read"
		return s, nil
	}
	ctl, err := src.Conn(ctx)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("source: open control connection: %w", err)
	}
	defer ctl.Close()
	lctx, cancel := context.WithTimeout(ctx, lockTimeout)
	defer cancel()
	started := time.Now()
	how, unlock, err := globalLock(lctx, ctl, f)
	if err != nil {
		s.close()
		return nil, err
	}
	res.Consistency = how
	for _, c := range s.conns {
		if _, err = c.ExecContext(lctx, "SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ"); err == nil {
			_, err = c.ExecContext(lctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY")
		}
		if err != nil {
			break
		}
	}
	if err == nil {
		readPosition(lctx, ctl, res)
	}
	_, uerr := ctl.ExecContext(ctx, unlock)
	res.LockSeconds = time.Since(started).Seconds()
	if err = errors.Join(err, uerr); err != nil {
		s.close()
		return nil, fmt.Errorf("source: open consistent snapshots: %w", err)
	}
	return s, nil
}

// globalLock takes the lightest lock that stops commits: MariaDB's backup
// stages block commits without closing tables; elsewhere FLUSH TABLES WITH
// READ LOCK. It returns what it took and the statement that releases it.
func globalLock(ctx context.Context, ctl *sql.Conn, f flavour.Name) (how, unlock string, err error) {
	if f.IsMariaDB() {
		if _, err = ctl.ExecContext(ctx, "BACKUP STAGE START"); err == nil {
			if _, err = ctl.ExecContext(ctx, "BACKUP STAGE BLOCK_COMMIT"); err == nil {
				return "backup stage block_commit", "BACKUP STAGE END", nil
			}
			ctl.ExecContext(ctx, "BACKUP STAGE END") //nolint:errcheck // falling back to FTWRL
		}
	}
	if _, err = ctl.ExecContext(ctx, "FLUSH TABLES WITH READ LOCK"); err != nil {
		return "", "", fmt.Errorf("source: take a global read lock for a consistent copy (needs RELOAD, or BACKUP_ADMIN on MySQL): %w; --consistency none copies without it", err)
	}
	return "flush tables with read lock", "UNLOCK TABLES", nil
}

// readPosition records the binary log file, position and GTID set while
// commits are stopped; a server without a binary log leaves them empty.
func readPosition(ctx context.Context, ctl *sql.Conn, res *Result) {
	res.BinlogFile, res.BinlogPos, res.GTID, _ = target.BinlogPosition(ctx, ctl)
}
