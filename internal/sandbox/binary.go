package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// binary is a kind of server binary that the user gives (TiDB's
// tidb-server, Vitess's vtcombo): what messages call it, the flag that
// makes it print its version, what a binary that prints no version is
// not, where one comes from, and how to read the release from what it
// printed ("" when it is not one).
type binary struct {
	what, versionFlag, notIt, sources string
	release                           func(out string) string
}

// check returns path made absolute and the release of the binary there.
// A path that is not an executable of b's kind is ErrInvalid saying what
// it found.
func (b binary) check(ctx context.Context, path string) (abs, release string, err error) {
	abs, err = filepath.Abs(path)
	if err != nil {
		return "", "", fmt.Errorf("find %s: %w", b.what, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "", outcomef(ErrInvalid, "%s %s: no such file; %s", b.what, path, b.sources)
	case err != nil:
		return "", "", fmt.Errorf("find %s: %w", b.what, err)
	case fi.IsDir() || fi.Mode()&0o111 == 0:
		return "", "", outcomef(ErrInvalid, "%s %s: not an executable file (chmod +x it, or unpack it first)", b.what, path)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, abs, b.versionFlag).CombinedOutput()
	release = b.release(string(out))
	if err != nil || release == "" {
		first, _, _ := strings.Cut(string(bytes.TrimSpace(out)), "\n")
		if len(first) > 120 {
			first = first[:120]
		}
		return "", "", outcomef(ErrInvalid, "%s %s: %s (%s %s said %q); %s", b.what, path, b.notIt, filepath.Base(path), b.versionFlag, first, b.sources)
	}
	return abs, release, nil
}
