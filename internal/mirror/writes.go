package mirror

import (
	"context"
	"fmt"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/client"
	"github.com/shakedown/shakedown/internal/fingerprint"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/wire"
)

// With Options.Writes the twins run the writes too, and the transactions
// around them, each session's in the order the client sent them, and
// compare them as they compare reads: the affected rows, the warnings
// and the errors (and the rows of a write that returns some). The
// candidate changes: it must be a throwaway copy that follow does not
// feed, or it would get each write twice.

// notSent is why a statement is not sent to a candidate even with
// --writes: it acts on the server or other sessions rather than on data
// (the connection ids a KILL names are the control's), or on replication.
const notSent = "server administration (never sent to a candidate)"

// adminStatement reports whether a statement of info is never sent to a
// candidate, --writes or not.
func adminStatement(info *fingerprint.Info) bool {
	switch info.Verb {
	case "KILL", "SHUTDOWN", "CHANGE", "START", "STOP", "RESET", "PURGE", "INSTALL", "UNINSTALL":
		// START and RESET alone: START TRANSACTION is a verb of its own,
		// START SLAVE / RESET MASTER are not parsed.
		return true
	}
	return info.Write == "SET GLOBAL"
}

// serverIdentity names a server by what two servers do not share: its
// host name, port and data directory.
const serverIdentity = "SELECT @@hostname, @@port, @@datadir"

// firstRow keeps the first row of a result as text.
type firstRow struct{ vals []string }

func (r *firstRow) Columns([]wire.Column) {}

func (r *firstRow) Row(values [][]byte) {
	if r.vals != nil {
		return
	}
	r.vals = make([]string, len(values))
	for i, v := range values {
		r.vals[i] = string(v)
	}
}

// identity is the server identity of the server c is connected to.
func identity(c *wire.Conn) ([]string, error) {
	var r firstRow
	if err := c.SendQuery(serverIdentity); err != nil {
		return nil, err
	}
	if _, err := c.ReadReply(&r); err != nil {
		return nil, err
	}
	if len(r.vals) != 3 {
		return nil, fmt.Errorf("%s: got %d values, want 3", serverIdentity, len(r.vals))
	}
	return r.vals, nil
}

// checkNotControl refuses --writes to a candidate that is the control's
// own server under another name (localhost for 127.0.0.1, another port
// of a proxy), whose writes would be applied twice. ctl is the control's
// identity.
func checkNotControl(ctx context.Context, ctl []string, name string, cfg *mysql.Config) error {
	c, err := client.DialWire(ctx, cfg, wire.Options{})
	if err != nil {
		return fmt.Errorf("mirror: --writes: connect to candidate %s to check it is not the control: %w", name, err)
	}
	defer c.Close()
	id, err := identity(c)
	if err != nil {
		return fmt.Errorf("mirror: --writes: read candidate %s's identity: %w", name, err)
	}
	if fmt.Sprint(id) == fmt.Sprint(ctl) {
		return usage.Errorf("mirror: --writes: candidate %s is the control's own server (host %s, port %s, datadir %s): its writes would be applied twice; name a throwaway copy", name, id[0], id[1], id[2])
	}
	return nil
}
