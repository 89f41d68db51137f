// Package progress keeps a long command's status on one line: on a
// terminal the line is rewritten in place; elsewhere (a log file, a pipe)
// it is written as a plain line at most once per interval, so that a log
// shows the command is alive without a line per second. Lines that must
// stay are written above the live line.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// IsTerminal reports whether w is a terminal, where a line is redrawn in
// place (New's live).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Columns is the width of the terminal w is, 0 when w is none or its
// width is unknown.
func Columns(w io.Writer) int {
	if f, ok := w.(interface{ Fd() uintptr }); ok && IsTerminal(w) {
		return columns(f.Fd())
	}
	return 0
}

// Line is one status line. Its methods are safe for concurrent use; a nil
// *Line does nothing, so that a command without progress need not test.
type Line struct {
	mu    sync.Mutex
	w     io.Writer
	live  bool
	every time.Duration
	now   func() time.Time

	last  time.Time // when a plain line was last written
	shown bool      // the live line is on screen
}

// New returns a line writing to w: rewritten in place when live (w is a
// terminal), else a plain line at most every interval. now is the clock.
func New(w io.Writer, live bool, every time.Duration, now func() time.Time) *Line {
	return &Line{w: w, live: live, every: every, now: now, last: now()}
}

// Set shows s as the status.
func (l *Line) Set(s string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.live {
		fmt.Fprintf(l.w, "\r\033[K%s", s)
		l.shown = true
		return
	}
	if now := l.now(); now.Sub(l.last) >= l.every {
		fmt.Fprintln(l.w, s)
		l.last = now
	}
}

// Println writes s as a line that stays, above the live line, which the
// next Set draws again.
func (l *Line) Println(s string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
	fmt.Fprintln(l.w, s)
}

// Clear takes the live line off the screen; a plain line stays written.
func (l *Line) Clear() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.clear()
}

func (l *Line) clear() {
	if l.live && l.shown {
		fmt.Fprint(l.w, "\r\033[K")
		l.shown = false
	}
}

// Clock writes d as m:ss, or h:mm:ss from an hour.
func Clock(d time.Duration) string {
	d = max(d, 0).Round(time.Second)
	h, m, s := int(d/time.Hour), int(d/time.Minute)%60, int(d/time.Second)%60
	if h > 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%d:%02d", m, s)
}

// Left estimates the time still needed for total units of work when done
// of them took elapsed, at the pace so far; false when there is no pace
// yet to go by.
func Left(done, total int64, elapsed time.Duration) (time.Duration, bool) {
	if done <= 0 || total <= 0 || elapsed <= 0 {
		return 0, false
	}
	if done >= total {
		return 0, true
	}
	return time.Duration(float64(elapsed) * float64(total-done) / float64(done)), true
}
