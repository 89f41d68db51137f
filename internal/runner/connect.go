package runner

import (
	"fmt"
	"strings"

	"github.com/shakedown/shakedown/internal/result"
)

// ConnectMode says when the threads of a run open connections.
type ConnectMode int

const (
	// Persistent keeps one connection per thread for the whole run.
	Persistent ConnectMode = iota
	// PerEvent opens a connection for every event and closes it after
	// (--connect-mode=transaction).
	PerEvent
	// PerStatement opens a connection for every statement and closes it
	// after (--connect-mode=query).
	PerStatement
)

var connectModeNames = [...]string{result.ConnectPersistent, "transaction", "query"}

// String is the mode's name on the command line.
func (m ConnectMode) String() string {
	if m < 0 || int(m) >= len(connectModeNames) {
		return fmt.Sprintf("ConnectMode(%d)", int(m))
	}
	return connectModeNames[m]
}

// ParseConnectMode reads a --connect-mode value.
func ParseConnectMode(s string) (ConnectMode, error) {
	for i, n := range connectModeNames {
		if strings.EqualFold(strings.TrimSpace(s), n) {
			return ConnectMode(i), nil
		}
	}
	return 0, fmt.Errorf("--connect-mode must be persistent, transaction or query (got %q)", s)
}
