//go:build unix

package progress

import "golang.org/x/sys/unix"

// columns is the width of the terminal open on fd, 0 when unknown.
func columns(fd uintptr) int {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
