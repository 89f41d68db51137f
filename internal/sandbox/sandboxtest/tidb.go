package sandboxtest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/sandbox"
)

// The flavours' binaries for tests: a TiDB server build ships xz-packed
// in the project's shared folder beside the checkout, since no package
// registry serves TiDB.
const sharedTiDB = "shared/flavours/tidb-server.xz"

var tidbState struct {
	once sync.Once
	inst *sandbox.Instance
	bin  string
	err  error
	skip string
}

// TiDBGet says how to get a TiDB server for the tests, for the one line
// a skipped test prints.
const TiDBGet = "no TiDB server for the flavour tests: set SHAKEDOWN_TIDB_SERVER to a tidb-server binary, put one on PATH, or keep ../shared/flavours/tidb-server.xz beside the checkout"

// TiDBServer finds a tidb-server binary for tests: SHAKEDOWN_TIDB_SERVER,
// tidb-server on PATH, or the shared build unpacked once into the user's
// cache (by its checksum, so that a new build is unpacked anew). "" when
// there is none.
func TiDBServer() (string, error) {
	if p := os.Getenv("SHAKEDOWN_TIDB_SERVER"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("tidb-server"); err == nil {
		return p, nil
	}
	packed := findShared(sharedTiDB)
	if packed == "" {
		return "", nil
	}
	return unpackXZ(packed, "tidb-server")
}

// findShared looks for rel beside the module's root and the folders above.
func findShared(rel string) string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			for d := filepath.Dir(dir); ; d = filepath.Dir(d) {
				if p := filepath.Join(d, rel); fileExists(p) {
					return p
				}
				if d == filepath.Dir(d) {
					return ""
				}
			}
		}
		if dir == filepath.Dir(dir) {
			return ""
		}
		dir = filepath.Dir(dir)
	}
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// unpackXZ unpacks packed with xz into the cache as name-<checksum>,
// once: test binaries of several packages may do it at the same time, so
// each writes a file of its own and renames it into place.
func unpackXZ(packed, name string) (string, error) {
	f, err := os.Open(packed)
	if err != nil {
		return "", err
	}
	h := sha256.New()
	_, err = io.Copy(h, f)
	f.Close()
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "shakedown", "flavours")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, name+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	if fileExists(out) {
		return out, nil
	}
	tmp, err := os.CreateTemp(dir, name+".*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	cmd := exec.Command("xz", "-dc", packed)
	cmd.Stdout = tmp
	if msg, err := runCaptured(cmd); err != nil {
		tmp.Close()
		return "", fmt.Errorf("unpack %s (needs xz, from xz-utils): %v: %s", packed, err, msg)
	}
	if err := tmp.Chmod(0o755); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	return out, os.Rename(tmp.Name(), out)
}

func runCaptured(cmd *exec.Cmd) (string, error) {
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	return string(stderr.b), err
}

type limitedBuffer struct{ b []byte }

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if len(l.b) < 4096 {
		l.b = append(l.b, p...)
	}
	return len(p), nil
}

// TiDB returns the target URL of a TiDB sandbox shared by the tests of
// this binary, starting it on first use. Without a TiDB server the test is
// skipped with one line saying how to get one; with -short too.
func TiDB(t testing.TB) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs a TiDB server: skipped with -short")
	}
	tidbState.once.Do(func() {
		bin, err := TiDBServer()
		switch {
		case err != nil:
			tidbState.err = err
			return
		case bin == "":
			tidbState.skip = TiDBGet
			return
		}
		tidbState.bin = bin
		tidbState.inst, tidbState.err = startWith("tidb", sandbox.Options{Flavour: flavour.TiDB, Server: bin})
	})
	if tidbState.skip != "" {
		t.Skip(tidbState.skip)
	}
	if tidbState.err != nil {
		t.Fatalf("start the TiDB test sandbox: %v", tidbState.err)
	}
	return tidbState.inst.URL()
}

// TiDBInstance is the shared TiDB sandbox, after TiDB(t).
func TiDBInstance() *sandbox.Instance { return tidbState.inst }

// GaleraInstance is the shared Galera cluster, after Galera(t).
func GaleraInstance() *sandbox.Instance { return galeraState.inst }

var galeraState struct {
	once sync.Once
	inst *sandbox.Instance
	err  error
}

// Galera returns the target URL (every node's host and port) of a Galera
// cluster of three nodes shared by the tests of this binary, starting it
// on first use; with -short the test is skipped.
func Galera(t testing.TB) string {
	t.Helper()
	RequireServer(t)
	galeraState.once.Do(func() {
		galeraState.inst, galeraState.err = startWith("galera", sandbox.Options{Flavour: flavour.Galera,
			Set: []string{"innodb_buffer_pool_size=128M", "innodb_flush_log_at_trx_commit=2", "innodb_log_file_size=48M"}})
	})
	if galeraState.err != nil {
		t.Fatalf("start the Galera test cluster: %v", galeraState.err)
	}
	return galeraState.inst.URL()
}

var vitessState struct {
	once sync.Once
	inst *sandbox.Instance
	err  error
	skip string
}

// VitessGet says how to get a vtcombo for the tests, for the one line a
// skipped test prints.
const VitessGet = "no vtcombo for the Vitess tests: run scripts/install-vitess.sh (builds " + sandbox.VitessModule +
	" from the Go module proxy into the user's cache, about 4 minutes on 2 cores), set SHAKEDOWN_VITESS_SERVER, put vtcombo on PATH, or keep a build as ../shared/flavours/vtcombo.xz"

// sharedVitess is where a vtcombo build would ship beside the checkout,
// xz-packed as TiDB's is, to spare each machine the build.
const sharedVitess = "shared/flavours/vtcombo.xz"

// VitessServer finds a vtcombo for tests: SHAKEDOWN_VITESS_SERVER, vtcombo
// on PATH, the one scripts/install-vitess.sh built, or a shared build
// unpacked once into the cache; "" when there is none.
func VitessServer() (string, error) {
	if p := os.Getenv("SHAKEDOWN_VITESS_SERVER"); p != "" {
		return p, nil
	}
	if p, err := exec.LookPath("vtcombo"); err == nil {
		return p, nil
	}
	if p := sandbox.VitessCached(); fileExists(p) {
		return p, nil
	}
	if packed := findShared(sharedVitess); packed != "" {
		return unpackXZ(packed, "vtcombo")
	}
	return "", nil
}

// Vitess returns the target URL of a Vitess sandbox (vtgate over a MariaDB
// sandbox, one unsharded keyspace) shared by the tests of this binary,
// starting it on first use. Without a vtcombo the test is skipped with one
// line saying how to get one; with -short too.
func Vitess(t testing.TB) string {
	t.Helper()
	RequireServer(t)
	vitessState.once.Do(func() {
		bin, err := VitessServer()
		switch {
		case err != nil:
			vitessState.err = err
			return
		case bin == "":
			vitessState.skip = VitessGet
			return
		}
		vitessState.inst, vitessState.err = startWith("vitess", sandbox.Options{Flavour: flavour.Vitess, Server: bin, Set: Settings})
	})
	if vitessState.skip != "" {
		t.Skip(vitessState.skip)
	}
	if vitessState.err != nil {
		t.Fatalf("start the Vitess test sandbox: %v", vitessState.err)
	}
	return vitessState.inst.URL()
}

// RequireVitess returns a vtcombo for the test (VitessServer) and the
// MariaDB beneath it (RequireServer): without one the test is skipped
// with one line saying how to get it, and with -short.
func RequireVitess(t testing.TB) string {
	t.Helper()
	RequireServer(t)
	bin, err := VitessServer()
	if err != nil {
		t.Fatalf("find a vtcombo: %v", err)
	}
	if bin == "" {
		t.Skip(VitessGet)
	}
	return bin
}
