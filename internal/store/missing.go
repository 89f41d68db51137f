package store

import (
	"errors"
	"io/fs"
	"os"
)

// Missing reports whether the store path names is a file that is not
// there. A store on a server is never missing: it is made on first use.
func Missing(path string) bool {
	_, err := os.Stat(path)
	return !IsURL(path) && errors.Is(err, fs.ErrNotExist)
}
