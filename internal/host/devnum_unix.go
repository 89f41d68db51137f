//go:build unix

package host

import "golang.org/x/sys/unix"

// deviceNumber returns the major and minor number of the device holding
// path.
func deviceNumber(path string) (uint32, uint32, error) {
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		return 0, 0, err
	}
	dev := uint64(st.Dev) // Dev is narrower on some systems
	return unix.Major(dev), unix.Minor(dev), nil
}
