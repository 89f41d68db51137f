package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/target"
)

// A Vitess sandbox is vtgate and its tablets in one vtcombo process (the
// way Vitess's own vttestserver runs them) over a MariaDB sandbox beneath
// it. The record is the MariaDB server's (its data directory, socket and
// logs, on a port of its own); record.Gate is vtcombo, whose MySQL port is
// the sandbox's URL. The keyspace is the sandbox database, sbtest, of
// Options.Shards shards, each a database vt_sbtest_SHARD in the one MariaDB
// server. vtcombo keeps its topology in memory and is given it again on
// every start; a sharded keyspace's VSchema (a hash vindex on id for
// sysbench's tables) is a file in the sandbox that vtcombo reads at start.
// Clients log in as anyone without a password, as on the other sandboxes.
//
// vtcombo refuses to run as root; started by root, it runs in a user
// namespace of its own in which it is not root (Linux).

// gate is a Vitess sandbox's vtcombo process.
type gate struct {
	Bin      string   `json:"server"`
	Version  string   `json:"version"` // vtcombo's, e.g. "24.0.4"
	Port     int      `json:"port"`    // vtgate's MySQL protocol
	WebPort  int      `json:"web_port"`
	GRPCPort int      `json:"grpc_port"`
	PID      int      `json:"pid"`
	DataDir  string   `json:"dir"` // its own directory: pid file, VSchema
	ErrorLog string   `json:"log"` // its standard output and error
	Args     []string `json:"args"`
}

// VitessModule is the Vitess release scripts/install-vitess.sh builds.
const VitessModule = "vitess.io/vitess@v0.24.4"

// VitessSources is where a vtcombo binary comes from, for the error that
// finds none.
const VitessSources = "pass --server PATH to a vtcombo binary, set SHAKEDOWN_VITESS_SERVER, put vtcombo on PATH, " +
	"or build one with scripts/install-vitess.sh (" + VitessModule + " from the Go module proxy, into " + vitessCacheRel + "; about 4 minutes on 2 cores)"

// vitessCacheRel is where scripts/install-vitess.sh puts vtcombo, below
// the user's cache directory.
const vitessCacheRel = "~/.cache/shakedown/flavours/vitess-v0.24.4/vtcombo"

// MaxShards is the most shards a Vitess sandbox's keyspace may have.
const MaxShards = 16

// vitessSettings are the MariaDB settings beneath vtgate: vtgate speaks
// utf8mb4 to its tablets and reads their schema in it. --set overrides
// them.
var vitessSettings = []setting{
	{"character_set_server", "utf8mb4"},
	{"collation_server", "utf8mb4_general_ci"},
}

// VitessCached is the vtcombo scripts/install-vitess.sh builds, "" when
// no cache directory is known.
func VitessCached() string {
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(cache, "shakedown", "flavours", "vitess-v0.24.4", "vtcombo")
}

// FindVitess checks a vtcombo binary: path as given (--server,
// SHAKEDOWN_VITESS_SERVER), else vtcombo on PATH, else the one
// scripts/install-vitess.sh built. A path that is not an executable
// vtcombo is ErrInvalid saying what it found; none at all is ErrNoServer
// (and ErrInvalid) naming the ways to get one.
func FindVitess(ctx context.Context, path string) (*Server, error) {
	if path == "" {
		path = lookPath("vtcombo")
	}
	if path == "" {
		if c := VitessCached(); c != "" {
			path = firstExecutable(c)
		}
	}
	if path == "" {
		return nil, outcomef(errNoBinary, "no Vitess server (vtcombo): %s", VitessSources)
	}
	abs, v, err := vitessBinary.check(ctx, path)
	if err != nil {
		return nil, err
	}
	return &Server{Path: abs, Flavour: string(flavour.Vitess), Version: v}, nil
}

// vitessBinary is how FindVitess checks a vtcombo.
var vitessBinary = binary{what: "vtcombo", versionFlag: "--version", notIt: "not Vitess's vtcombo", sources: VitessSources, release: vitessRelease}

var vitessVersionRE = regexp.MustCompile(`^vtcombo version Version: ([0-9][0-9.]*)`)

// vitessRelease reads "vtcombo version Version: 24.0.4 (Git revision ...)"
// as 24.0.4.
func vitessRelease(out string) string {
	if m := vitessVersionRE.FindStringSubmatch(strings.TrimSpace(out)); m != nil {
		return m[1]
	}
	return ""
}

// ShardNames are the names of a keyspace's n shards: "0" for one, else
// n key ranges of equal width, as Vitess names them ("-80", "80-").
func ShardNames(n int) []string {
	if n <= 1 {
		return []string{"0"}
	}
	out := make([]string, n)
	for i := range n {
		lo, hi := "", ""
		if i > 0 {
			lo = fmt.Sprintf("%02x", i*256/n)
		}
		if i < n-1 {
			hi = fmt.Sprintf("%02x", (i+1)*256/n)
		}
		out[i] = lo + "-" + hi
	}
	return out
}

// shardDatabase is the MariaDB database a shard's tablets serve.
func shardDatabase(shard string) string { return "vt_" + Database + "_" + shard }

// vitessTopology is vtcombo's --proto-topo: the one keyspace, its shards
// each with a primary (replica_count counts it) and the read-only tablet
// vtcombo always adds, in one cell.
func vitessTopology(shards []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "keyspaces:{name:%q", Database)
	for _, s := range shards {
		fmt.Fprintf(&b, " shards:{name:%q db_name_override:%q}", s, shardDatabase(s))
	}
	b.WriteString(` replica_count:1} cells:"test"`)
	return b.String()
}

// SysbenchTables is how many of sysbench's tables (sbtest1...) a sharded
// Vitess sandbox's VSchema routes by id.
const SysbenchTables = 64

// vitessVSchema is a sharded keyspace's VSchema: sysbench's tables and
// slap's hot row routed by a hash of id. Other tables need a VSchema of
// their own (ALTER VSCHEMA, which the sandbox allows everyone).
func vitessVSchema() ([]byte, error) {
	type colVindex struct {
		Column string `json:"column"`
		Name   string `json:"name"`
	}
	type table struct {
		ColumnVindexes []colVindex `json:"column_vindexes"`
	}
	tables := map[string]table{}
	for i := 1; i <= SysbenchTables; i++ {
		tables["sbtest"+strconv.Itoa(i)] = table{ColumnVindexes: []colVindex{{Column: "id", Name: "hash"}}}
	}
	return json.MarshalIndent(map[string]any{
		"sharded":  true,
		"vindexes": map[string]any{"hash": map[string]string{"type": "hash"}},
		"tables":   tables,
	}, "", "  ")
}

// gateArgs is vtcombo's command line: vtgate's MySQL protocol on the
// sandbox's port, its HTTP and gRPC ports, the MariaDB beneath by its
// socket (over TCP its tablets would try to set up replication between
// themselves), every tablet user the sandbox user, and no authentication.
func (r *record) gateArgs(g *gate, shards []string) []string {
	args := []string{
		"--pid-file=" + filepath.Join(g.DataDir, "vtcombo.pid"),
		"--bind-address=127.0.0.1",
		"--port=" + strconv.Itoa(g.WebPort),
		"--grpc-port=" + strconv.Itoa(g.GRPCPort),
		"--mysql-server-port=" + strconv.Itoa(g.Port),
		"--mysql-server-bind-address=127.0.0.1",
		"--mysql-auth-server-impl=none",
		"--db-socket=" + r.Socket,
		"--dbddl-plugin=vttest",
		"--vschema-ddl-authorized-users=%",
		"--tablet-types-to-wait=PRIMARY",
		"--log-format=text",
		"--proto-topo=" + vitessTopology(shards),
	}
	for _, u := range []string{"app", "appdebug", "allprivs", "dba", "filtered", "repl", "erepl", "clone"} {
		args = append(args, "--db-"+u+"-user="+User)
	}
	if len(shards) > 1 {
		args = append(args, "--schema-dir="+filepath.Join(g.DataDir, "schema"))
	}
	return args
}

// upVitess is the rest of Up for a Vitess sandbox once its MariaDB runs:
// the shards' databases, the VSchema, and vtcombo on opts.Port (or a port
// it picks).
func upVitess(ctx context.Context, opts Options, r *record, vt *Server) error {
	shards := ShardNames(opts.Shards)
	g := &gate{DataDir: r.path("vtcombo"), ErrorLog: r.path("vtcombo.log"), Bin: vt.Path, Version: vt.Version}
	if err := os.MkdirAll(g.DataDir, 0o755); err != nil {
		return fmt.Errorf("create sandbox: %w", err)
	}
	if len(shards) > 1 {
		vs, err := vitessVSchema()
		if err != nil {
			return err
		}
		dir := filepath.Join(g.DataDir, "schema", Database)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create sandbox: %w", err)
		}
		if err := outfile.WriteAtomic(filepath.Join(dir, "vschema.json"), vs); err != nil {
			return fmt.Errorf("create sandbox: %w", err)
		}
	}
	if err := createShardDatabases(ctx, r.Port, shards); err != nil {
		return fmt.Errorf("create sandbox %s: %w", opts.Name, err)
	}
	r.Gate, r.Shards = g, len(shards)
	const attempts = 3
	for attempt := 1; ; attempt++ {
		var err error
		if g.Port = opts.Port; g.Port == 0 {
			if g.Port, err = pickPort(); err != nil {
				return err
			}
		}
		if g.WebPort, err = pickPort(); err != nil {
			return err
		}
		if g.GRPCPort, err = pickPort(); err != nil {
			return err
		}
		g.Args = r.gateArgs(g, shards)
		err = r.startGate(ctx)
		if err == nil {
			return nil
		}
		_ = terminate(context.WithoutCancel(ctx), g.PID, g.DataDir, 0)
		if errors.Is(err, errExited) && gateClash(g.ErrorLog) {
			if opts.Port != 0 && attempt == attempts {
				return portInUse(opts.Port)
			}
			if attempt < attempts {
				_ = os.Remove(g.ErrorLog)
				continue
			}
		}
		return startError("start sandbox "+opts.Name+" (vtcombo)", err, false, g.ErrorLog)
	}
}

// gateClash reports whether vtcombo's log says a port was taken.
func gateClash(log string) bool {
	b, err := os.ReadFile(log)
	return err == nil && bytes.Contains(b, []byte("address already in use"))
}

// createShardDatabases makes each shard's database in the MariaDB beneath.
func createShardDatabases(ctx context.Context, port int, shards []string) error {
	t := &target.Target{User: User, Hosts: []string{"127.0.0.1"}, Ports: []int{port}, ConnectTimeout: 5 * time.Second}
	db, err := t.OpenConfig(t.Config(t.Endpoints()[0], ""), 1)
	if err != nil {
		return err
	}
	defer db.Close()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for _, s := range shards {
		if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+escape.Ident(shardDatabase(s))); err != nil {
			return fmt.Errorf("create the database of shard %s: %w", s, err)
		}
	}
	return nil
}

// startGate starts vtcombo and waits until vtgate answers from the MariaDB
// beneath (gateProbe); the record is saved with its process either way.
func (r *record) startGate(ctx context.Context) error {
	g := r.Gate
	// On the sandbox's CPUs too (--cpus), as the MariaDB is; a CPU quota
	// holds the MariaDB's cgroup only.
	p, err := spawnAs(g.Bin, g.Args, g.DataDir, g.ErrorLog, r.Tied, r.Placement.cpuList(), os.Geteuid() == 0)
	if err != nil {
		return err
	}
	g.PID = p.pid
	if err := r.save(); err != nil {
		return err
	}
	_, err = waitReady(ctx, p, g.Port, r.Socket, gateProbe)
	return err
}

// startVitess starts vtcombo again over the MariaDB that r.start has just
// started, and makes the record a Vitess one again (r.start reads back
// the server beneath as the record's flavour).
func (r *record) startVitess(ctx context.Context) error {
	if err := r.startGate(ctx); err != nil {
		return err
	}
	r.asVitess()
	return r.save()
}

// asVitess makes a record whose MariaDB and vtcombo run the Vitess
// sandbox it is: its product Vitess over the MariaDB, its client port
// vtgate's.
func (r *record) asVitess() {
	if r.Flavour != string(flavour.Vitess) {
		r.Beneath = strings.TrimSpace(label(r.Flavour) + " " + r.Version)
	}
	r.Flavour, r.Version, r.GatePort = string(flavour.Vitess), r.Gate.Version, r.Gate.Port
}

// isVitess says whether the record is a Vitess sandbox.
func (r *record) isVitess() bool { return r.Gate != nil }
