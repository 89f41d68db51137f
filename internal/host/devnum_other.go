//go:build !unix

package host

import "errors"

// deviceNumber is not known off unix systems.
func deviceNumber(path string) (uint32, uint32, error) {
	return 0, 0, errors.New("device numbers are read on Linux only")
}
