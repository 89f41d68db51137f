// Package sandbox runs throwaway local MariaDB and MySQL servers for
// benchmarks and tests.
//
// A sandbox is one server with its own directory under a home directory:
//
//	HOME/NAME/sandbox.json   the Instance, and how to start the server again
//	HOME/NAME/data/          the data directory
//	HOME/NAME/mysqld.sock    the socket (in /tmp when this path would be too long)
//	HOME/NAME/error.log      the server's error log
//
// The server listens on 127.0.0.1 only and is detached from the process that
// started it, so "shakedown sandbox up" can exit and leave it running. It
// has a database sbtest and a user shakedown (at 127.0.0.1 and localhost)
// with all privileges and no password, created by an --init-file on every
// start. Up, Start, Kill, Stop and Down are safe to call from different
// processes; two calls on the same sandbox at the same time are not.
package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/home"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/usage"
)

// User and Database are what every sandbox has for clients.
const (
	User     = "shakedown"
	Database = "sbtest"
)

// Outcomes callers test with errors.Is.
var (
	ErrInvalid   = errors.New("invalid sandbox options")
	ErrNoServer  = errors.New("no database server found")
	ErrExists    = errors.New("sandbox exists")
	ErrNotFound  = errors.New("no such sandbox")
	ErrRunning   = errors.New("sandbox is running")
	ErrPortInUse = errors.New("port in use")
)

// errNoBinary is a flavour's server that the user must give (TiDB's,
// Vitess's) given nowhere: ErrNoServer, and bad usage as well.
var errNoBinary = fmt.Errorf("%w: %w", ErrNoServer, ErrInvalid)

// Options say what sandbox Up creates.
type Options struct {
	Name    string   // [a-zA-Z0-9_-]+, at most 64 characters
	Port    int      // 0 = pick a free loopback port
	Set     []string // "var=value" server settings; override the defaults
	Basedir string   // unpacked tarball with bin/mariadbd or bin/mysqld; empty = from PATH, /usr/sbin, /usr/bin
	// Flavour is the server to run: "" or mariadb (MariaDB or MySQL, as
	// Basedir or PATH has), galera, tidb or vitess.
	Flavour flavour.Name
	// Server is the TiDB server or the Vitess vtcombo binary; empty =
	// found as FindTiDB and FindVitess say.
	Server string
	// Nodes is a Galera cluster's size; 0 means 3.
	Nodes int
	// Shards is a Vitess sandbox's shards; 0 means 1 (unsharded).
	Shards int
	Home   string // directory holding all sandboxes, one subdirectory per name

	// Placement binds the server to CPUs, limits it to a CPU quota or
	// sets its NUMA memory policy; see ParsePlacement. Kept across starts.
	Placement Placement

	// DieWithParent asks the kernel to kill the server when this process
	// exits, however it exits (Linux only). For test harnesses; kept across
	// Kill and Start.
	DieWithParent bool
}

// Instance is a sandbox as stored in its sandbox.json.
type Instance struct {
	Name     string   `json:"name"`
	Port     int      `json:"port"`
	Socket   string   `json:"socket"`
	DataDir  string   `json:"datadir"`
	PID      int      `json:"pid"`
	User     string   `json:"user"`
	Database string   `json:"database"`
	Version  string   `json:"version"`  // e.g. "10.11.19"
	Flavour  string   `json:"flavour"`  // "mariadb" or "mysql"
	Basedir  string   `json:"basedir"`  // empty for a system install
	Settings []string `json:"settings"` // effective var=value settings, defaults included
	// StatusPort is a TiDB sandbox's HTTP status port (/status, and
	// Prometheus text at /metrics); 0 for others.
	StatusPort int `json:"status_port,omitempty"`
	// NodePorts are a Galera cluster's SQL ports, the first node's first.
	NodePorts []int `json:"node_ports,omitempty"`
	// GatePort is a Vitess sandbox's vtgate port, which clients use; Port
	// is then the MariaDB beneath, and Beneath its product ("MariaDB
	// 10.11.19").
	GatePort int    `json:"gate_port,omitempty"`
	Beneath  string `json:"beneath,omitempty"`
	// Shards is a Vitess sandbox's keyspace's shards.
	Shards int `json:"shards,omitempty"`

	Placement Placement `json:"placement,omitzero"` // where the server runs
	Cgroup    string    `json:"cgroup,omitempty"`   // its cgroup directory when it has a CPU quota

	Home     string `json:"-"` // the home directory it lives in
	Dir      string `json:"-"` // its own directory
	ErrorLog string `json:"-"` // the server's error log
	Running  bool   `json:"-"` // whether the server process is alive (as of loading)
}

// URL is the target URL for the sandbox. It has no password: the sandbox
// user has none.
func (i *Instance) URL() string {
	if len(i.NodePorts) > 1 {
		hosts, ports := make([]string, len(i.NodePorts)), make([]string, len(i.NodePorts))
		for n, p := range i.NodePorts {
			hosts[n], ports[n] = "127.0.0.1", strconv.Itoa(p)
		}
		return fmt.Sprintf("mysql://%s@%s:%s/%s", i.User, strings.Join(hosts, ","), strings.Join(ports, ","), i.Database)
	}
	return fmt.Sprintf("mysql://%s@%s/%s", i.User, net.JoinHostPort("127.0.0.1", strconv.Itoa(i.ClientPort())), i.Database)
}

// ClientPort is the port clients use: vtgate's in a Vitess sandbox, else
// the server's (a Galera cluster's first node's).
func (i *Instance) ClientPort() int {
	if i.GatePort != 0 {
		return i.GatePort
	}
	return i.Port
}

// Product is the server as written for people, e.g. "MariaDB 10.11.19",
// "Vitess 24.0.4 over MariaDB 10.11.19".
func (i *Instance) Product() string {
	p := strings.TrimSpace(label(i.Flavour) + " " + i.Version)
	if i.Beneath != "" {
		p += " over " + i.Beneath
	}
	return p
}

// record is sandbox.json: the Instance plus how to start its server again.
type record struct {
	Instance
	Bin  string   `json:"server"`
	Args []string `json:"args"`
	// Nodes are a Galera cluster's nodes after the first.
	Nodes []node `json:"nodes,omitempty"`
	// Gate is a Vitess sandbox's vtcombo.
	Gate *gate `json:"gate,omitempty"`
	Tied bool  `json:"tied,omitempty"`
}

// DefaultHome is sandboxes in shakedown's home (home.Dir), else "" (no
// home known).
func DefaultHome(getenv func(string) string) string {
	if h := home.Dir(getenv); h != "" {
		return filepath.Join(h, "sandboxes")
	}
	return ""
}

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

// ValidateName checks a sandbox name; the error wraps ErrInvalid.
func ValidateName(name string) error {
	if !nameRE.MatchString(name) {
		return outcomef(ErrInvalid, "sandbox name %q: use 1-64 letters, digits, '_' or '-'", name)
	}
	return nil
}

// pickPort is freePort; tests replace it to force a clash.
var pickPort = freePort

// stopGrace is how long a server gets to shut down cleanly on SIGTERM.
const stopGrace = 30 * time.Second

// Up creates and starts a sandbox. It returns when the server answers a
// query as the sandbox user, or an error with the tail of the server's
// error log; on error nothing of the sandbox is left behind.
func Up(ctx context.Context, opts Options) (*Instance, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	tidb, galera, vitess := opts.Flavour == flavour.TiDB, opts.Flavour == flavour.Galera, opts.Flavour == flavour.Vitess
	user, err := parseSet(opts.Set)
	if err != nil {
		return nil, err
	}
	defaults := defaultSettings
	if vitess {
		defaults = mergeSettings(defaultSettings, vitessSettings)
	}
	settings := mergeSettings(defaults, user)
	srv, vt, err := findServers(ctx, opts)
	if err != nil {
		return nil, err
	}
	if opts.Port != 0 {
		if err := checkPort(opts.Port); err != nil {
			return nil, err
		}
	}
	home, err := filepath.Abs(opts.Home)
	if err != nil {
		return nil, fmt.Errorf("create sandbox: %w", err)
	}
	if err := os.MkdirAll(home, 0o755); err != nil {
		return nil, fmt.Errorf("create sandbox home: %w", err)
	}
	r := newRecord(home, opts.Name)
	if err := os.Mkdir(r.Dir, 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, existsError(home, opts.Name)
		}
		return nil, fmt.Errorf("create sandbox: %w", err)
	}
	r.Flavour, r.Version = srv.Flavour, srv.Version
	r.Basedir = srv.Basedir
	r.Settings = settingStrings(settings)
	r.Bin = srv.Path
	r.Tied = opts.DieWithParent
	r.Placement = opts.Placement

	var p *process
	ok := false
	defer func() {
		if ok {
			return
		}
		if p != nil {
			_ = terminate(context.WithoutCancel(ctx), p.pid, r.DataDir, 0)
		}
		_ = removeCgroup(context.WithoutCancel(ctx), r.Cgroup)
		r.removeFiles()
	}()
	// started ends Up once the server runs: the sandbox is kept.
	started := func() (*Instance, error) {
		ok = true
		r.Running = true
		inst := r.Instance
		return &inst, nil
	}
	if tidb {
		if p, err = upTiDB(ctx, opts, r); err != nil {
			return nil, err
		}
		return started()
	}

	if err := os.WriteFile(r.path("init.sql"), []byte(initSQL), 0o600); err != nil {
		return nil, fmt.Errorf("create sandbox: %w", err)
	}
	// Each sandbox has a temporary directory of its own: a starting server
	// removes what it takes for its leftovers in its tmpdir, which breaks
	// another sandbox being created or started beside it in a shared /tmp.
	if err := os.MkdirAll(r.path("tmp"), 0o700); err != nil {
		return nil, fmt.Errorf("create sandbox: %w", err)
	}
	root := os.Geteuid() == 0
	if err := srv.install(ctx, r.DataDir, r.path("install.log"), root, append([]string{"--tmpdir=" + r.path("tmp")}, installArgs(settings)...)); err != nil {
		return nil, fmt.Errorf("create sandbox %s: %w", opts.Name, err)
	}

	if galera {
		if srv.Flavour != string(flavour.MariaDB) {
			return nil, outcomef(ErrNoServer, "a Galera sandbox runs MariaDB, and %s is %s", srv.Path, label(srv.Flavour))
		}
		r.Flavour = string(flavour.Galera)
		if err := upGalera(ctx, opts, r, srv, settings, root); err != nil {
			_ = r.terminateNodes(context.WithoutCancel(ctx), 0)
			_ = terminate(context.WithoutCancel(ctx), r.PID, r.DataDir, 0)
			return nil, err
		}
		return started()
	}
	server := opts
	if vitess {
		server.Port = 0 // the port asked for is vtgate's
	}
	if p, err = r.startPicking(ctx, server, false, func() ([]string, error) { return r.serverArgs(srv, settings, root), nil }); err != nil {
		return nil, err
	}
	if vitess {
		if err := upVitess(ctx, opts, r, vt); err != nil {
			if r.Gate != nil {
				_ = terminate(context.WithoutCancel(ctx), r.Gate.PID, r.Gate.DataDir, 0)
			}
			return nil, err
		}
		r.asVitess()
		if err := r.save(); err != nil {
			return nil, err
		}
	}
	return started()
}

// findServers finds the binaries opts asks for: the MariaDB or MySQL
// server (none for TiDB, whose is FindTiDB's) and a Vitess sandbox's
// vtcombo, which runs over MariaDB only.
func findServers(ctx context.Context, opts Options) (srv, vt *Server, err error) {
	srv = &Server{}
	if opts.Flavour == flavour.Vitess {
		if vt, err = FindVitess(ctx, opts.Server); err != nil {
			return nil, nil, err
		}
	}
	if opts.Flavour != flavour.TiDB {
		if srv, err = FindServer(ctx, opts.Basedir); err != nil {
			return nil, nil, err
		}
	}
	if vt != nil && srv.Flavour != string(flavour.MariaDB) {
		return nil, nil, outcomef(ErrNoServer, "a Vitess sandbox runs over MariaDB, and %s is %s", srv.Path, label(srv.Flavour))
	}
	return srv, vt, nil
}

// check says, as ErrInvalid, what in opts Up cannot take.
func (opts Options) check() error {
	if err := ValidateName(opts.Name); err != nil {
		return err
	}
	if opts.Home == "" {
		return outcomef(ErrInvalid, "no sandbox home: set SHAKEDOWN_HOME or HOME")
	}
	if opts.Port < 0 || opts.Port > 65535 {
		return outcomef(ErrInvalid, "--port %d: want 1-65535, or 0 to pick a free port", opts.Port)
	}
	tidb, galera, vitess := opts.Flavour == flavour.TiDB, opts.Flavour == flavour.Galera, opts.Flavour == flavour.Vitess
	switch {
	case opts.Flavour != "" && opts.Flavour != flavour.MariaDB && !tidb && !galera && !vitess:
		return outcomef(ErrInvalid, "--flavour %s: sandboxes run mariadb (MariaDB or MySQL, from PATH or --basedir), galera, tidb or vitess", opts.Flavour)
	case opts.Nodes != 0 && !galera, opts.Nodes < 0 || opts.Nodes == 1 || opts.Nodes > 9:
		return outcomef(ErrInvalid, "--nodes %d: a Galera cluster (--flavour galera) of 2 to 9 nodes", opts.Nodes)
	case opts.Shards != 0 && !vitess, opts.Shards < 0 || opts.Shards > MaxShards:
		return outcomef(ErrInvalid, "--shards %d: a Vitess keyspace (--flavour vitess) of 1 to %d shards", opts.Shards, MaxShards)
	case tidb && len(opts.Set) > 0:
		return outcomef(ErrInvalid, "--set is for MariaDB and MySQL sandboxes: set a TiDB sandbox's variables with SET GLOBAL, which TiDB keeps")
	case tidb && opts.Basedir != "":
		return outcomef(ErrInvalid, "--basedir is for MariaDB and MySQL tarballs: give a TiDB server with --server PATH")
	case !tidb && !vitess && opts.Server != "":
		return outcomef(ErrInvalid, "--server is for --flavour tidb and vitess; a MariaDB or MySQL server comes from PATH or --basedir")
	}
	return nil
}

// startPicking starts r's server on opts.Port, or on a free port it picks.
// A picked port can be taken by someone else before the server binds it
// (test binaries start sandboxes in parallel): it picks again. args makes
// the command line once r.Port is set; with picksOwn it picks ports of
// its own (TiDB's status port), which a clash may have hit as well, so a
// clash is tried again even on a port the user gave.
func (r *record) startPicking(ctx context.Context, opts Options, picksOwn bool, args func() ([]string, error)) (*process, error) {
	const attempts = 3
	for attempt := 1; ; attempt++ {
		r.Port = opts.Port
		if r.Port == 0 {
			var err error
			if r.Port, err = pickPort(); err != nil {
				return nil, err
			}
		}
		a, err := args()
		if err != nil {
			return nil, err
		}
		r.Args = a
		p, err := r.start(ctx)
		if err == nil {
			return p, nil
		}
		if p != nil {
			_ = terminate(context.WithoutCancel(ctx), p.pid, r.DataDir, 0)
		}
		if errors.Is(err, errExited) && portClash(r.ErrorLog) {
			if opts.Port != 0 && (!picksOwn || attempt == attempts) {
				return nil, portInUse(opts.Port)
			}
			if attempt < attempts {
				_ = os.Remove(r.ErrorLog)
				_ = os.Remove(r.consoleLog())
				continue
			}
		}
		return nil, startError("start sandbox "+opts.Name, err, false, r.ErrorLog, r.consoleLog())
	}
}

// Start starts a stopped sandbox again on the same port and data, for
// example after Kill. It returns ErrRunning if it is running.
func Start(ctx context.Context, home, name string) (*Instance, error) {
	r, err := load(home, name)
	if err != nil {
		return nil, err
	}
	if r.Running {
		return nil, outcomef(ErrRunning, "sandbox %s already runs as pid %d", name, r.PID)
	}
	if r.Gate != nil {
		// vtcombo is gone (or both are): the MariaDB beneath, if it
		// still runs, is stopped cleanly and both start again.
		if err := terminate(ctx, r.PID, r.DataDir, stopGrace); err != nil {
			return nil, fmt.Errorf("start sandbox %s: %w", name, err)
		}
	}
	// Right after a crash the port can stay busy for a moment (a client
	// retrying may even hold it); wait for it within a deadline.
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := checkPort(r.Port)
		if err == nil && r.Gate != nil {
			err = checkPort(r.Gate.Port)
		}
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return r.startAgain(ctx, "start sandbox "+name)
}

// Kill ends a sandbox's server with SIGKILL, as a crash would, and waits
// until it is gone. The sandbox stays; Start brings it back.
func Kill(ctx context.Context, home, name string) error {
	r, err := load(home, name)
	if err != nil {
		return err
	}
	if err := r.terminateNodes(ctx, 0); err != nil {
		return fmt.Errorf("kill sandbox %s: %w", name, err)
	}
	if err := terminate(ctx, r.PID, r.DataDir, 0); err != nil {
		return fmt.Errorf("kill sandbox %s: %w", name, err)
	}
	return nil
}

// Stop shuts a sandbox's server down cleanly (SIGTERM, then SIGKILL after a
// deadline). The sandbox stays; Start brings it back.
func Stop(ctx context.Context, home, name string) error {
	r, err := load(home, name)
	if err != nil {
		return err
	}
	if err := r.terminateNodes(ctx, stopGrace); err != nil {
		return fmt.Errorf("stop sandbox %s: %w", name, err)
	}
	if err := terminate(ctx, r.PID, r.DataDir, stopGrace); err != nil {
		return fmt.Errorf("stop sandbox %s: %w", name, err)
	}
	return nil
}

// Down stops a sandbox's server (SIGTERM, wait with a deadline, then
// SIGKILL) and removes its directory. It returns ErrNotFound when there is
// no such sandbox.
func Down(ctx context.Context, home, name string) error {
	if err := ValidateName(name); err != nil {
		return err
	}
	home, err := filepath.Abs(home)
	if err != nil {
		return fmt.Errorf("remove sandbox: %w", err)
	}
	r, err := load(home, name)
	if errors.Is(err, ErrNotFound) {
		return err
	}
	if err != nil {
		// Half made (an interrupted Up) or damaged: go by the pid file.
		r = newRecord(home, name)
		if b, rerr := os.ReadFile(r.path("mysqld.pid")); rerr == nil {
			r.PID, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		if b, rerr := os.ReadFile(r.path("vtcombo/vtcombo.pid")); rerr == nil {
			r.Gate = &gate{DataDir: r.path("vtcombo")}
			r.Gate.PID, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	if err := r.terminateNodes(ctx, stopGrace); err != nil {
		return fmt.Errorf("remove sandbox %s: %w", name, err)
	}
	if err := terminate(ctx, r.PID, r.DataDir, stopGrace); err != nil {
		return fmt.Errorf("remove sandbox %s: %w", name, err)
	}
	if err := removeCgroup(ctx, r.Cgroup); err != nil {
		return fmt.Errorf("remove sandbox %s: %w", name, err)
	}
	if err := r.removeFiles(); err != nil {
		return fmt.Errorf("remove sandbox %s: %w", name, err)
	}
	return nil
}

// Get returns the sandbox name in home, with Running set; ErrNotFound when
// there is none.
func Get(home, name string) (*Instance, error) {
	r, err := load(home, name)
	if err != nil {
		return nil, err
	}
	inst := r.Instance
	return &inst, nil
}

// List returns the sandboxes in home, by name, with Running set. A missing
// home has none.
func List(home string) ([]*Instance, error) {
	entries, err := os.ReadDir(home)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list sandboxes: %w", err)
	}
	var out []*Instance
	for _, e := range entries {
		if !e.IsDir() || ValidateName(e.Name()) != nil {
			continue
		}
		r, err := load(home, e.Name())
		if err != nil {
			continue // not a sandbox, or one being created
		}
		inst := r.Instance
		out = append(out, &inst)
	}
	return out, nil
}

// initSQL runs on every start; IF NOT EXISTS makes restarts harmless. One
// statement a line, as older servers require of an init file.
const initSQL = `CREATE DATABASE IF NOT EXISTS sbtest;
CREATE USER IF NOT EXISTS 'shakedown'@'127.0.0.1';
CREATE USER IF NOT EXISTS 'shakedown'@'localhost';
GRANT ALL PRIVILEGES ON *.* TO 'shakedown'@'127.0.0.1' WITH GRANT OPTION;
GRANT ALL PRIVILEGES ON *.* TO 'shakedown'@'localhost' WITH GRANT OPTION;
`

func newRecord(home, name string) *record {
	dir := filepath.Join(home, name)
	r := &record{Instance: Instance{
		Name:     name,
		User:     User,
		Database: Database,
		DataDir:  filepath.Join(dir, "data"),
		Socket:   socketPath(dir),
	}}
	r.setPaths(home)
	return r
}

func (r *record) setPaths(home string) {
	r.Home = home
	r.Dir = filepath.Join(home, r.Name)
	r.ErrorLog = r.path("error.log")
}

func (r *record) path(file string) string { return filepath.Join(r.Dir, file) }
func (r *record) consoleLog() string      { return r.path("console.log") }

// socketPath is DIR/mysqld.sock unless that passes the ~108 bytes a Unix
// socket path may have (deep temp directories do); then a name in /tmp
// derived from DIR.
func socketPath(dir string) string {
	p := filepath.Join(dir, "mysqld.sock")
	if len(p) < 100 {
		return p
	}
	sum := sha256.Sum256([]byte(dir))
	return "/tmp/shakedown-" + hex.EncodeToString(sum[:8]) + ".sock"
}

// serverArgs is the server's command line. --no-defaults must come first.
func (r *record) serverArgs(srv *Server, settings []setting, root bool) []string {
	args := []string{
		"--no-defaults",
		"--datadir=" + r.DataDir,
		"--socket=" + r.Socket,
		"--pid-file=" + r.path("mysqld.pid"),
		"--log-error=" + r.ErrorLog,
		"--port=" + strconv.Itoa(r.Port),
		"--bind-address=127.0.0.1",
		"--skip-name-resolve",
		"--init-file=" + r.path("init.sql"),
		"--tmpdir=" + r.path("tmp"), // a --set tmpdir=... later on the line wins
	}
	if srv.Basedir != "" {
		args = append(args, "--basedir="+srv.Basedir)
	}
	if root {
		args = append(args, "--user=root")
	}
	if srv.Flavour == "mysql" {
		// MySQL 8's X plugin listens on 33060 by default, which two
		// sandboxes cannot share; loose- keeps 5.7 from refusing it.
		args = append(args, "--loose-mysqlx=OFF")
	}
	return append(args, serverArgs(settings, r.DataDir)...)
}

// start runs the server and waits until it answers. The returned process
// is non-nil whenever one was started, also on error.
func (r *record) start(ctx context.Context) (*process, error) {
	bin, args, err := r.Placement.command(r.Bin, r.Args)
	if err != nil {
		return nil, err
	}
	p, err := spawn(bin, args, r.Dir, r.consoleLog(), r.Tied, r.Placement.cpuList())
	if err != nil {
		return nil, err
	}
	r.PID = p.pid
	if r.Placement.CPUQuota > 0 {
		// Moved in before the server has done any work worth counting.
		r.Cgroup, err = setupCgroup(cgroupName(r.Dir), r.Placement.CPUQuota, p.pid)
	}
	// Saved before waiting so that Down finds the process (and the
	// cgroup) even if we are interrupted.
	if serr := r.save(); err == nil {
		err = serr
	}
	if err != nil {
		return p, err
	}
	v, err := waitReady(ctx, p, r.Port, r.Socket, serverProbe)
	if err != nil {
		return p, err
	}
	r.Flavour, r.Version = parseVersion(v)
	return p, r.save()
}

// save writes sandbox.json atomically.
func (r *record) save() error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("save sandbox: %w", err)
	}
	if err := outfile.WriteAtomic(r.path("sandbox.json"), append(b, '\n')); err != nil {
		return fmt.Errorf("save sandbox: %w", err)
	}
	return nil
}

// load reads a sandbox's record and checks whether its server runs.
func load(home, name string) (*record, error) {
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	dir := filepath.Join(home, name)
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil, outcomef(ErrNotFound, "no sandbox %s in %s", name, home)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sandbox.json"))
	if err != nil {
		return nil, fmt.Errorf("load sandbox %s: %w", name, err)
	}
	r := &record{}
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("load sandbox %s: %w", name, err)
	}
	r.Name = name
	r.setPaths(home)
	r.Running = alive(r.PID, r.DataDir) && (r.Gate == nil || alive(r.Gate.PID, r.Gate.DataDir))
	return r, nil
}

// removeFiles removes the sandbox directory and a socket kept outside it.
func (r *record) removeFiles() error {
	if r.Socket != "" && !strings.HasPrefix(r.Socket, r.Dir+string(filepath.Separator)) {
		_ = os.Remove(r.Socket)
		_ = os.Remove(r.Socket + ".lock")
	}
	return os.RemoveAll(r.Dir)
}

func existsError(home, name string) error {
	r, err := load(home, name)
	if err == nil && r.Running {
		return outcomef(ErrExists, "sandbox %s already runs on 127.0.0.1:%d: use it as it is (shakedown sandbox up %s prints its URL), or pick another name; sandbox down %s would delete it with its data", name, r.Port, name, name)
	}
	return outcomef(ErrExists, "sandbox %s already exists in %s (not running): start it again with its data (shakedown sandbox up %s), or pick another name; sandbox down %s would delete it with its data", name, home, name, name)
}

// portClash reports whether the error log says the port was taken.
func portClash(errorLog string) bool {
	b, err := os.ReadFile(errorLog)
	if err != nil {
		return false
	}
	s := string(b)
	return strings.Contains(s, "Address already in use") || strings.Contains(s, "Bind on TCP/IP port")
}

// outcome is an error that is one of the Err... outcomes but reads as its
// own message alone, which is written for the user.
type outcome struct {
	kind error
	msg  string
}

func (e *outcome) Error() string { return e.msg }
func (e *outcome) Unwrap() error { return e.kind }

func outcomef(kind error, format string, args ...any) error {
	return &outcome{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// NameArg is the one sandbox NAME a "sandbox verb" command line holds in
// args; a missing, extra or invalid name is bad usage.
func NameArg(verb string, args []string) (string, error) {
	switch {
	case len(args) == 0:
		return "", usage.Errorf("sandbox %s: missing NAME, e.g. shakedown sandbox %s durable", verb, verb)
	case len(args) > 1:
		return "", usage.Errorf("sandbox %s: unexpected argument %q: give one NAME", verb, args[1])
	}
	if err := ValidateName(args[0]); err != nil {
		return "", usage.Errorf("sandbox %s: %v", verb, err)
	}
	return args[0], nil
}
