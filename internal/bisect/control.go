package bisect

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/sandbox"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/vars"
)

// queryTimeout bounds every statement bisect sends to a server itself.
const queryTimeout = 30 * time.Second

// restartTimeout bounds one restart of the control sandbox.
const restartTimeout = 3 * time.Minute

// server is a connection to the control or the candidate for reading and
// setting global variables. It holds no load: measurements open their own
// connections through the engine.
type server struct {
	tgt *target.Target
	db  *sql.DB
}

func openServer(ctx context.Context, tgt *target.Target) (*server, error) {
	// The load runs in the database the URL names: one that does not
	// exist is bad input, said before anything is measured or changed.
	db, err := tgt.ConnectServer(ctx, 2, "vars bisect")
	if err != nil {
		return nil, err
	}
	return &server{tgt: tgt, db: db}, nil
}

func (s *server) Close() error { return s.db.Close() }

// reconnect opens a fresh pool, after a restart.
func (s *server) reconnect(ctx context.Context) error {
	ns, err := openServer(ctx, s.tgt)
	if err != nil {
		return err
	}
	s.db.Close()
	s.db = ns.db
	return nil
}

// read collects the global variables, as vars diff does.
func (s *server) read(ctx context.Context) (map[string]string, error) {
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	m, err := vars.Collect(qctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s.tgt, err)
	}
	return m, nil
}

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// setGlobal runs SET GLOBAL name = value.
func (s *server) setGlobal(ctx context.Context, name, value string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("set global %q: not a variable name", name)
	}
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	if _, err := s.db.ExecContext(qctx, "SET GLOBAL "+name+" = "+literal(value)); err != nil {
		return fmt.Errorf("SET GLOBAL %s = %s: %w", name, literal(value), err)
	}
	return nil
}

// probe sets a variable to its own value (SET GLOBAL v = @@GLOBAL.v), which
// changes nothing, to learn whether it can be set at runtime and whether
// the user may. It returns nil for a dynamic variable, else the server's
// error.
func (s *server) probe(ctx context.Context, name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%q is not a variable name", name)
	}
	qctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	_, err := s.db.ExecContext(qctx, "SET GLOBAL "+name+" = @@GLOBAL."+name)
	return err
}

var numberRE = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)

// literal writes a variable's value as SQL: numbers as they are, anything
// else as a quoted string (ON, OFF and enum names are accepted quoted).
func literal(v string) string {
	if numberRE.MatchString(v) {
		return v
	}
	r := strings.NewReplacer(`\`, `\\`, `'`, `\'`)
	return "'" + r.Replace(v) + "'"
}

func errorNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// ErrPrivilege means the control's user may not SET GLOBAL; nothing was
// changed.
var ErrPrivilege = errors.New("not allowed to SET GLOBAL")

// privilegeError explains a refused probe: the server's message names the
// privilege it wants (SUPER, SYSTEM_VARIABLES_ADMIN, BINLOG ADMIN...).
func privilegeError(tgt *target.Target, name string, err error) error {
	msg := err.Error()
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		msg = me.Message
	}
	return fmt.Errorf("%w: the user of %s may not SET GLOBAL %s (%s); vars bisect needs SUPER or SYSTEM_VARIABLES_ADMIN (MariaDB: SUPER; BINLOG ADMIN for binary log variables); nothing was changed",
		ErrPrivilege, tgt, name, msg)
}

// findSandbox returns the sandbox in home that serves tgt on this host, or
// nil when tgt is not a running sandbox there.
func findSandbox(home string, tgt *target.Target) (*sandbox.Instance, error) {
	if home == "" || tgt.Socket != "" || len(tgt.Ports) != 1 || len(tgt.Hosts) != 1 {
		return nil, nil
	}
	switch tgt.Hosts[0] {
	case "127.0.0.1", "localhost", "::1":
	default:
		return nil, nil
	}
	list, err := sandbox.List(home)
	if err != nil {
		return nil, err
	}
	for _, inst := range list {
		if inst.Running && inst.ClientPort() == tgt.Ports[0] {
			return inst, nil
		}
	}
	return nil, nil
}

// differing returns the names whose normalised values differ between a and
// b, per-instance ones left out, as vars diff compares them. Variables a
// server lacks count only when both have them.
func differing(a, b map[string]string) []string {
	var out []string
	for _, d := range vars.Diff(a, b) {
		if d.Values[0] == vars.Missing || d.Values[1] == vars.Missing || strings.HasPrefix(d.Name, "(") {
			continue
		}
		out = append(out, d.Name)
	}
	sort.Strings(out)
	return out
}
