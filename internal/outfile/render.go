package outfile

import (
	"bytes"
	"io"
)

// Render writes what write renders to path atomically (WriteAtomic): a
// document that fails half way leaves no file.
func Render(path string, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	return WriteAtomic(path, b.Bytes())
}
