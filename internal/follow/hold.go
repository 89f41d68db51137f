package follow

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/shakedown/shakedown/internal/verify"
)

// A hold stops a follower at one position of the source's binary log for
// a moment, so that a recheck reads the target as it is at exactly the
// position of a source snapshot. The row in shakedown_follow.hold asks
// for it: with no position, "stop where you are"; with one, "apply up to
// it, then stop". The follower holds until the row is gone or expired; it
// never waits longer than the row says.

// StateHeld is the saved state of a follower that holds.
const StateHeld = "held"

// holdFor bounds one hold: a verify that dies does not stop the follower
// for longer.
const holdFor = 10 * time.Second

const holdTable = `CREATE TABLE IF NOT EXISTS ` + Schema + `.hold (
  name VARCHAR(190) NOT NULL PRIMARY KEY,
  binlog_file VARCHAR(255) NOT NULL,
  binlog_pos BIGINT UNSIGNED NOT NULL,
  expires_ms BIGINT NOT NULL
)`

// holdRequest is the hold row, if any, that has not expired.
func (f *follower) holdRequest(ctx context.Context) (Position, bool, error) {
	var p Position
	var expires int64
	err := f.dst.DB.QueryRowContext(ctx, "SELECT binlog_file, binlog_pos, expires_ms FROM "+Schema+".hold WHERE name = ?", f.saved.Name).
		Scan(&p.File, &p.Pos, &expires)
	switch {
	case errors.Is(err, sql.ErrNoRows), isNoTable(err):
		return p, false, nil
	case err != nil:
		return p, false, fmt.Errorf("target: read the hold row: %w", err)
	}
	return p, time.Now().UnixMilli() < expires, nil
}

// checkHold looks for a hold request after a batch: it sets where the
// reader must stop (f.holdAt), or holds here until the request is gone.
func (f *follower) checkHold(ctx context.Context) error {
	for {
		p, ok, err := f.holdRequest(ctx)
		if err != nil || !ok {
			f.holdAt = Position{}
			return err
		}
		at := f.saved.Position
		if p.File != "" && !(at.File == p.File && at.Pos == p.Pos) {
			if at.Reached(p) {
				f.holdAt = Position{} // passed it: the asker sees it and gives up
				return nil
			}
			f.holdAt = p // apply up to p, then hold
			return nil
		}
		if err := f.hold(ctx); err != nil {
			return err
		}
	}
}

// hold keeps the follower where it is while the hold row stands and says
// so in the saved row; it returns when the row changes, is gone or has
// expired.
func (f *follower) hold(ctx context.Context) error {
	f.saved.State = StateHeld
	defer func() { f.saved.State = StateFollowing }()
	start, _, _ := f.holdRequest(ctx)
	lastSave := time.Time{}
	for {
		if time.Since(lastSave) >= 200*time.Millisecond {
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), queryBound)
			err := save(sctx, f.dst.DB, f.saved)
			cancel()
			if err != nil {
				return err
			}
			lastSave = time.Now()
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Millisecond):
		}
		p, ok, err := f.holdRequest(ctx)
		if err != nil || !ok || p != start {
			f.saved.State = StateFollowing
			sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), queryBound)
			defer cancel()
			return errors.Join(err, save(sctx, f.dst.DB, f.saved))
		}
	}
}

// Align opens a snapshot of the source at a known position of its binary
// log and returns once the follower holds the target at exactly that
// position: verify's exact recheck (verify.Options.Align). release lets
// the follower go on. It answers verify.ErrNotAligned when the source
// keeps no position with its snapshots (MariaDB does:
// Binlog_snapshot_file and _position) or the follower could not stop there.
func (w *Watcher) Align(ctx context.Context) (verify.Snapshot, func(), error) {
	w.mu.Lock()
	unlock := sync.OnceFunc(w.mu.Unlock)
	clear := func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), queryBound)
		defer cancel()
		w.dst.ExecContext(cctx, "DELETE FROM "+Schema+".hold WHERE name = ?", w.name) //nolint:errcheck // it expires by itself
		unlock()
	}
	fail := func(err error) (verify.Snapshot, func(), error) {
		clear()
		return nil, nil, err
	}
	// Stop the follower where it is first: the snapshot's position is then
	// ahead of it, never behind.
	if err := w.request(ctx, Position{}); err != nil {
		return fail(err)
	}
	if _, err := w.held(ctx, nil); err != nil {
		return fail(err)
	}
	conn, err := w.src.Conn(ctx)
	if err != nil {
		return fail(fmt.Errorf("source: %w", err))
	}
	snap := &connSnapshot{conn: conn}
	p, err := snapshotPosition(ctx, conn)
	if err != nil {
		snap.Rollback() //nolint:errcheck // read-only
		return fail(err)
	}
	err = w.request(ctx, p)
	if err == nil {
		_, err = w.held(ctx, &p)
	}
	if err != nil {
		snap.Rollback() //nolint:errcheck // read-only
		return fail(err)
	}
	return snap, clear, nil
}

// request writes the hold row: stop at p (zero: where you are).
func (w *Watcher) request(ctx context.Context, p Position) error {
	qctx, cancel := context.WithTimeout(ctx, queryBound)
	defer cancel()
	_, err := w.dst.ExecContext(qctx, "REPLACE INTO "+Schema+".hold (name, binlog_file, binlog_pos, expires_ms) VALUES (?,?,?,?)",
		w.name, p.File, p.Pos, time.Now().Add(holdFor).UnixMilli())
	if err != nil {
		return fmt.Errorf("target: ask the follower to hold: %w", err)
	}
	return nil
}

// held waits for the follower to say it holds, at p when p is given.
func (w *Watcher) held(ctx context.Context, p *Position) (*Saved, error) {
	deadline := time.Now().Add(holdFor / 2)
	for {
		s, err := w.Saved(ctx)
		if err != nil {
			return nil, err
		}
		switch {
		case p != nil && s.Position.Reached(*p) && !(s.Position.File == p.File && s.Position.Pos == p.Pos):
			return s, fmt.Errorf("%w: the follower went past %s", verify.ErrNotAligned, p)
		case s.State == StateHeld && (p == nil || (s.Position.File == p.File && s.Position.Pos == p.Pos)):
			return s, nil
		case !s.Alive(time.Now()):
			return s, fmt.Errorf("%w: the follower is not at work (%s)", verify.ErrNotAligned, s.State)
		case time.Now().After(deadline):
			return s, fmt.Errorf("%w: the follower did not hold within %s", verify.ErrNotAligned, holdFor/2)
		}
		select {
		case <-ctx.Done():
			return s, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// snapshotPosition opens a consistent snapshot on conn and reads the
// binary log position it stands at.
func snapshotPosition(ctx context.Context, conn *sql.Conn) (Position, error) {
	var p Position
	if _, err := conn.ExecContext(ctx, "START TRANSACTION WITH CONSISTENT SNAPSHOT"); err != nil {
		return p, fmt.Errorf("source: start a consistent snapshot: %w", err)
	}
	rows, err := conn.QueryContext(ctx, "SHOW SESSION STATUS LIKE 'binlog_snapshot_%'")
	if err != nil {
		return p, fmt.Errorf("%w: %v", verify.ErrNotAligned, err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, value string
		if err := rows.Scan(&name, &value); err != nil {
			return p, err
		}
		switch strings.ToLower(name) {
		case "binlog_snapshot_file":
			p.File = value
		case "binlog_snapshot_position":
			var n uint64
			fmt.Sscan(value, &n)
			p.Pos = uint32(n)
		}
	}
	if err := rows.Err(); err != nil {
		return p, err
	}
	if p.File == "" {
		return p, fmt.Errorf("%w: the source keeps no binary log position with its snapshots", verify.ErrNotAligned)
	}
	return p, nil
}

// connSnapshot is a snapshot on a connection of its own.
type connSnapshot struct{ conn *sql.Conn }

func (s *connSnapshot) QueryContext(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.conn.QueryContext(ctx, q, args...)
}

func (s *connSnapshot) QueryRowContext(ctx context.Context, q string, args ...any) *sql.Row {
	return s.conn.QueryRowContext(ctx, q, args...)
}

func (s *connSnapshot) Rollback() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := s.conn.ExecContext(ctx, "ROLLBACK")
	return errors.Join(err, s.conn.Close())
}
