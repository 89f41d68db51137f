// Package dial opens the connections of package wire, the client the load
// and replay use, for package target, which opens every other server
// connection. It is a package of its own only because wire's tests start
// sandboxes, which connect through target: target cannot import wire.
package dial

import (
	"context"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/wire"
)

// Wire opens one connection with cfg, one of a target's Configs that the
// caller may have changed (its timeouts, its default database). cfg's
// Timeout bounds the connect and the handshake; after them, ctx interrupts
// the connection when it ends. The caller closes it.
func Wire(ctx context.Context, cfg *mysql.Config, opt wire.Options) (*wire.Conn, error) {
	return wire.Dial(ctx, cfg, opt)
}
