package sandbox

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/outfile"
	"github.com/shakedown/shakedown/internal/target"
)

// A Galera sandbox is a MariaDB Galera cluster of Options.Nodes nodes on
// loopback (Debian's galera-4 provider under the system's mariadbd), each
// with its own SQL, group communication, IST and SST ports. The first node
// is the sandbox's own record (its port, data directory, socket and
// logs); the others are in record.Nodes. The first node is made and
// stopped once, and the others start from copies of its data directory,
// so that they join by IST (the writes since) rather than by a full state
// transfer. State transfers go through mariabackup (Debian's
// mariadb-backup): rsync's fails when the server runs as root, since its
// daemon then writes as nobody. A node that crashed recovers its position
// (--wsrep-recover) first.

// galeraProvider is Debian's galera-4 library.
var galeraProvider = []string{"/usr/lib/galera/libgalera_smm.so", "/usr/lib/galera4/libgalera_smm.so", "/usr/lib64/galera-4/libgalera_smm.so"}

// node is one Galera node after the first.
type node struct {
	Port     int      `json:"port"`
	PID      int      `json:"pid"`
	DataDir  string   `json:"datadir"`
	Socket   string   `json:"socket"`
	ErrorLog string   `json:"error_log"`
	Args     []string `json:"args"`
}

// galeraPorts are one node's ports besides SQL.
type galeraPorts struct{ gcomm, ist, sst int }

// galeraSettings are what every node runs with: the provider, the
// cluster's addresses, and the settings Galera needs (row events,
// interleaved auto-increment locks). The group timeouts are raised: on a
// loaded 2-core host the nodes left the Primary Component with the
// defaults.
func galeraSettings(provider string, self galeraPorts, all []galeraPorts, name string) []setting {
	addrs := make([]string, len(all))
	for i, p := range all {
		addrs[i] = "127.0.0.1:" + strconv.Itoa(p.gcomm)
	}
	return []setting{
		{"wsrep_on", "ON"},
		{"wsrep_provider", provider},
		{"wsrep_cluster_name", name},
		{"wsrep_cluster_address", "gcomm://" + strings.Join(addrs, ",")},
		{"wsrep_node_address", "127.0.0.1:" + strconv.Itoa(self.gcomm)},
		{"wsrep_provider_options", fmt.Sprintf("gmcast.listen_addr=tcp://127.0.0.1:%d;ist.recv_addr=127.0.0.1:%d;evs.suspect_timeout=PT30S;evs.inactive_timeout=PT60S;evs.install_timeout=PT60S",
			self.gcomm, self.ist)},
		{"wsrep_sst_receive_address", "127.0.0.1:" + strconv.Itoa(self.sst)},
		{"wsrep_sst_method", "mariabackup"},
		{"wsrep_sst_auth", "root:"},
		{"binlog_format", "ROW"},
		{"innodb_autoinc_lock_mode", "2"},
	}
}

// upGalera is Up for a Galera sandbox: r's directory exists and holds the
// first node's data directory; the caller removes it all if this fails.
func upGalera(ctx context.Context, opts Options, r *record, srv *Server, settings []setting, root bool) error {
	provider := firstExecutable(galeraProvider...)
	if provider == "" {
		for _, p := range galeraProvider {
			if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
				provider = p
			}
		}
	}
	if provider == "" {
		return outcomef(ErrNoServer, "no Galera provider (%s): install galera-4 (apt-get install galera-4)", galeraProvider[0])
	}
	n := opts.Nodes
	if n == 0 {
		n = 3
	}
	ports := make([]galeraPorts, n)
	sqlPorts := make([]int, n)
	for i := range ports {
		var err error
		for _, p := range []*int{&sqlPorts[i], &ports[i].gcomm, &ports[i].ist, &ports[i].sst} {
			if *p, err = pickPort(); err != nil {
				return err
			}
		}
	}
	if opts.Port != 0 {
		sqlPorts[0] = opts.Port
	}
	r.Port = sqlPorts[0]
	r.NodePorts = sqlPorts
	r.Args = r.serverArgs(srv, mergeSettings(settings, galeraSettings(provider, ports[0], ports, opts.Name)), root)
	// The first node alone, once, to make the history the others copy.
	p, err := r.startNode(ctx, r.Args, r.DataDir, r.Port, r.Socket, true)
	if err != nil {
		if p != nil {
			_ = terminate(context.WithoutCancel(ctx), p.pid, r.DataDir, 0)
		}
		return startError("start sandbox "+opts.Name+" (its first Galera node)", err, false, r.ErrorLog, r.consoleLog())
	}
	if err := terminate(ctx, p.pid, r.DataDir, stopGrace); err != nil {
		return err
	}
	// From now on every node must keep the history the copies have: the
	// init file, which grants, would move the first node past them and
	// force a state transfer.
	r.Args = withoutInitFile(r.Args)
	for i := 1; i < n; i++ {
		dir := r.path("node" + strconv.Itoa(i+1))
		nd := node{Port: sqlPorts[i], DataDir: filepath.Join(dir, "data"), Socket: socketPath(dir), ErrorLog: filepath.Join(dir, "error.log")}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create sandbox: %w", err)
		}
		if out, err := exec.CommandContext(ctx, "cp", "-a", r.DataDir, nd.DataDir).CombinedOutput(); err != nil {
			return fmt.Errorf("create sandbox: copy the first node's data: %v: %s", err, out)
		}
		_ = os.Remove(filepath.Join(nd.DataDir, "gvwstate.dat"))
		nd.Args = nodeArgs(withoutInitFile(r.serverArgs(srv, mergeSettings(settings, galeraSettings(provider, ports[i], ports, opts.Name)), root)), r, nd)
		r.Nodes = append(r.Nodes, nd)
	}
	return r.startCluster(ctx, "start sandbox "+opts.Name)
}

func withoutInitFile(args []string) []string {
	var out []string
	for _, a := range args {
		if !strings.HasPrefix(a, "--init-file=") {
			out = append(out, a)
		}
	}
	return out
}

// nodeArgs is the first node's command line made another node's: its own
// data directory, socket, logs, pid file and port.
func nodeArgs(args []string, r *record, nd node) []string {
	dir := filepath.Dir(nd.DataDir)
	repl := map[string]string{
		"--datadir=":   nd.DataDir,
		"--socket=":    nd.Socket,
		"--pid-file=":  filepath.Join(dir, "mysqld.pid"),
		"--log-error=": nd.ErrorLog,
		"--port=":      strconv.Itoa(nd.Port),
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = a
		for k, v := range repl {
			if strings.HasPrefix(a, k) {
				out[i] = k + v
			}
		}
	}
	return out
}

// startNode starts one node and waits until it answers; bootstrap starts
// a new Primary Component (the first node, when no other runs).
func (r *record) startNode(ctx context.Context, args []string, dataDir string, port int, socket string, bootstrap bool) (*process, error) {
	if bootstrap {
		if err := safeToBootstrap(dataDir); err != nil {
			return nil, err
		}
		args = append(append([]string(nil), args...), "--wsrep-new-cluster")
	}
	if pos := recoverPosition(args, dataDir, r.Bin); pos != "" {
		args = append(append([]string(nil), args...), "--wsrep-start-position="+pos)
	}
	p, err := spawn(r.Bin, args, r.Dir, r.consoleLog(), r.Tied, nil)
	if err != nil {
		return nil, err
	}
	if _, err := waitReady(ctx, p, port, socket, serverProbe); err != nil {
		return p, err
	}
	return p, nil
}

// startCluster starts every node: the first as a new Primary Component,
// the others joining it, and waits until all are synced.
func (r *record) startCluster(ctx context.Context, what string) error {
	if err := r.startSaved(ctx, &r.PID, r.Args, r.DataDir, r.Port, r.Socket, true); err != nil {
		return startError(what+" (node 1)", err, true, r.ErrorLog, r.consoleLog())
	}
	for i := range r.Nodes {
		nd := &r.Nodes[i]
		if err := r.startSaved(ctx, &nd.PID, nd.Args, nd.DataDir, nd.Port, nd.Socket, false); err != nil {
			return startError(fmt.Sprintf("%s (node %d)", what, i+2), err, true, nd.ErrorLog)
		}
	}
	return r.waitSynced(ctx)
}

// startSaved starts one node of the cluster (startNode) and saves the
// record with the node's process in *pid, whether or not the node came
// up, so that a stop finds what was started. The error is the start's,
// else the save's.
func (r *record) startSaved(ctx context.Context, pid *int, args []string, dataDir string, port int, socket string, bootstrap bool) error {
	p, err := r.startNode(ctx, args, dataDir, port, socket, bootstrap)
	if p != nil {
		*pid = p.pid
	}
	if serr := r.save(); err == nil {
		err = serr
	}
	return err
}

// waitSynced polls the first node until the cluster has every node and
// each node is synced.
func (r *record) waitSynced(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	want := len(r.Nodes) + 1
	last := ""
	for {
		ok := true
		for i, port := range r.NodePorts {
			size, state, err := wsrepState(ctx, port)
			if err != nil || size != want || state != "Synced" {
				ok, last = false, fmt.Sprintf("node %d: cluster size %d, state %q, %v", i+1, size, state, err)
				break
			}
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the Galera cluster was not synced within %v: %s", readyTimeout, last)
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func wsrepState(ctx context.Context, port int) (size int, state string, err error) {
	t := &target.Target{User: User, Hosts: []string{"127.0.0.1"}, Ports: []int{port}, ConnectTimeout: 2 * time.Second}
	db, err := t.OpenConfig(t.Config(t.Endpoints()[0], ""), 1)
	if err != nil {
		return 0, "", err
	}
	defer db.Close()
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var s sql.NullString
	err = db.QueryRowContext(qctx, "SELECT @@global.wsrep_on, (SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_CLUSTER_SIZE'), "+
		"(SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'WSREP_LOCAL_STATE_COMMENT')").Scan(new(sql.NullString), &size, &s)
	return size, s.String, err
}

// safeToBootstrap marks a node's state safe to start a new cluster from:
// after a crash Galera leaves safe_to_bootstrap at 0 on every node, and
// a throwaway cluster's first node is the one to start from.
func safeToBootstrap(dataDir string) error {
	path := filepath.Join(dataDir, "grastate.dat")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	s := strings.Replace(string(b), "safe_to_bootstrap: 0", "safe_to_bootstrap: 1", 1)
	return outfile.WriteAtomic(path, []byte(s))
}

var recoveredRE = regexp.MustCompile(`WSREP: Recovered position: ([0-9a-f-]+:-?[0-9]+)`)

// recoverPosition is the position a node that did not shut down cleanly
// (seqno -1 in its grastate.dat) last committed, as mariadbd
// --wsrep-recover finds it in InnoDB; "" when the state file has one.
func recoverPosition(args []string, dataDir, bin string) string {
	b, err := os.ReadFile(filepath.Join(dataDir, "grastate.dat"))
	if err != nil || !strings.Contains(string(b), "seqno:   -1") {
		return ""
	}
	log := filepath.Join(filepath.Dir(dataDir), "recover.log")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rargs := append(append([]string(nil), args...), "--wsrep-recover", "--log-error="+log)
	if err := exec.CommandContext(ctx, bin, rargs...).Run(); err != nil {
		return ""
	}
	f, err := os.Open(log)
	if err != nil {
		return ""
	}
	defer f.Close()
	pos := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := recoveredRE.FindStringSubmatch(sc.Text()); m != nil {
			pos = m[1]
		}
	}
	return pos
}

// terminateNodes ends the processes besides the record's own server: a
// Vitess sandbox's vtcombo, a Galera cluster's nodes after the first (the
// last first).
func (r *record) terminateNodes(ctx context.Context, grace time.Duration) error {
	if g := r.Gate; g != nil {
		if err := terminate(ctx, g.PID, g.DataDir, grace); err != nil {
			return fmt.Errorf("vtcombo: %w", err)
		}
	}
	for i := len(r.Nodes) - 1; i >= 0; i-- {
		if err := terminate(ctx, r.Nodes[i].PID, r.Nodes[i].DataDir, grace); err != nil {
			return fmt.Errorf("node %d: %w", i+2, err)
		}
	}
	return nil
}

// KillNode ends one node of a Galera sandbox with SIGKILL (1 is the
// first), as a crash would; the cluster goes on without it.
func KillNode(ctx context.Context, home, name string, n int) error {
	r, err := load(home, name)
	if err != nil {
		return err
	}
	switch {
	case n == 1:
		return terminate(ctx, r.PID, r.DataDir, 0)
	case n >= 2 && n <= len(r.Nodes)+1:
		return terminate(ctx, r.Nodes[n-2].PID, r.Nodes[n-2].DataDir, 0)
	}
	return outcomef(ErrInvalid, "sandbox %s has no node %d", name, n)
}

// isGalera says whether the record is a Galera cluster.
func (r *record) isGalera() bool { return r.Flavour == string(flavour.Galera) }
