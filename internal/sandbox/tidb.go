package sandbox

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/outfile"
)

// TiDBSources is where a TiDB server binary comes from, for the error
// that finds none: no package registry serves it.
const TiDBSources = "pass --server PATH, set SHAKEDOWN_TIDB_SERVER, or put tidb-server on PATH; " +
	"TiDB's binaries come from PingCAP's releases (tiup install tidb puts a tidb-server under ~/.tiup/components/tidb/)"

// SetFlavour sets o.Flavour from --flavour's value and, for TiDB or
// Vitess without --server, the binary from SHAKEDOWN_TIDB_SERVER or
// SHAKEDOWN_VITESS_SERVER (read through getenv).
func (o *Options) SetFlavour(name string, getenv func(string) string) error {
	f, err := flavour.Parse(name)
	if err != nil {
		return fmt.Errorf("--flavour: %w", err)
	}
	o.Flavour = f
	if o.Server == "" {
		switch f {
		case flavour.TiDB:
			o.Server = getenv("SHAKEDOWN_TIDB_SERVER")
		case flavour.Vitess:
			o.Server = getenv("SHAKEDOWN_VITESS_SERVER")
		}
	}
	return nil
}

// FindTiDB checks a tidb-server binary: path as given (--server,
// SHAKEDOWN_TIDB_SERVER), else tidb-server on PATH. A path that is not an
// executable TiDB server is ErrInvalid saying what it found; none at all
// is ErrNoServer (and ErrInvalid: bad usage) naming the ways to give one.
func FindTiDB(ctx context.Context, path string) (*Server, error) {
	if path == "" {
		if path = lookPath("tidb-server"); path == "" {
			return nil, outcomef(errNoBinary, "no TiDB server: %s", TiDBSources)
		}
	}
	abs, v, err := tidbBinary.check(ctx, path)
	if err != nil {
		return nil, err
	}
	return &Server{Path: abs, Flavour: string(flavour.TiDB), Version: v}, nil
}

// tidbBinary is how FindTiDB checks a tidb-server.
var tidbBinary = binary{what: "TiDB server", versionFlag: "-V", notIt: "not a tidb-server", sources: TiDBSources, release: tidbRelease}

// tidbRelease reads "Release Version: v8.4.0-alpha-390de884f4" from
// tidb-server -V as 8.4.0.
func tidbRelease(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), "Release Version:"); ok {
			v = strings.TrimPrefix(strings.TrimSpace(v), "v")
			v, _, _ = strings.Cut(v, "-")
			return v
		}
	}
	return ""
}

// tidbInitSQL makes the sandbox user and database at the server's first
// start (TiDB runs its -initialize-sql-file once, at bootstrap).
const tidbInitSQL = `CREATE DATABASE IF NOT EXISTS sbtest;
CREATE USER IF NOT EXISTS 'shakedown'@'%';
GRANT ALL PRIVILEGES ON *.* TO 'shakedown'@'%' WITH GRANT OPTION;
`

// tidbArgs is a TiDB sandbox's command line: one process with its
// embedded storage (unistore), as TiDB's own tests and playground run a
// node, on loopback, with its logs and socket in the sandbox.
func (r *record) tidbArgs() []string {
	return []string{
		"-store=unistore",
		"--path=" + r.DataDir,
		"-host=127.0.0.1",
		"-P=" + strconv.Itoa(r.Port),
		"-status=" + strconv.Itoa(r.StatusPort),
		"-status-host=127.0.0.1",
		"-socket=" + r.Socket,
		"-log-file=" + r.ErrorLog,
		"-log-slow-query=" + r.path("slow.log"),
		"-initialize-sql-file=" + r.path("init.sql"),
	}
}

// upTiDB is Up for a TiDB sandbox; r's directory exists, and the caller
// removes it if this fails.
func upTiDB(ctx context.Context, opts Options, r *record) (*process, error) {
	srv, err := FindTiDB(ctx, opts.Server)
	if err != nil {
		return nil, err
	}
	r.Flavour, r.Version, r.Bin = srv.Flavour, srv.Version, srv.Path
	if err := os.MkdirAll(r.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("create sandbox: %w", err)
	}
	if err := outfile.WriteAtomic(r.path("init.sql"), []byte(tidbInitSQL)); err != nil {
		return nil, fmt.Errorf("create sandbox: %w", err)
	}
	return r.startPicking(ctx, opts, true, func() ([]string, error) {
		var err error
		r.StatusPort, err = pickPort()
		return r.tidbArgs(), err
	})
}
