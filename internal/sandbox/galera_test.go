package sandbox

import (
	"context"
	"database/sql"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/target"
)

// A Galera sandbox: three nodes that replicate to each other, one URL
// naming them all, a node killed while the others go on, and stop, start
// and down of the whole cluster.
func TestGaleraSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a Galera cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	home := t.TempDir()
	inst, err := Up(ctx, Options{Name: "gal", Home: home, Flavour: flavour.Galera, Set: []string{"innodb_buffer_pool_size=128M"}, DieWithParent: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { Down(context.Background(), home, "gal") })
	if len(inst.NodePorts) != 3 || !strings.Contains(inst.URL(), "127.0.0.1,127.0.0.1,127.0.0.1:") || inst.Product() == "" || !strings.HasPrefix(inst.Product(), "MariaDB Galera") {
		t.Fatalf("got %+v (%s, %s), want three nodes in one URL", inst.NodePorts, inst.URL(), inst.Product())
	}
	open := func(port int) *sql.DB {
		tg := &target.Target{User: User, Hosts: []string{"127.0.0.1"}, Ports: []int{port}, ConnectTimeout: 5 * time.Second}
		db, err := tg.OpenConfig(tg.Config(tg.Endpoints()[0], Database), 1)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	first, third := open(inst.NodePorts[0]), open(inst.NodePorts[2])
	if _, err := first.ExecContext(ctx, "CREATE TABLE t (id INT PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	if _, err := first.ExecContext(ctx, "INSERT INTO t VALUES (1), (2)"); err != nil {
		t.Fatal(err)
	}
	// A causal read: the third node applies what the cluster committed
	// before it answers (it applies write-sets after their commit).
	var n int
	c3, err := third.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c3.ExecContext(ctx, "SET SESSION wsrep_sync_wait = 1")
	if err == nil {
		err = c3.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n)
	}
	c3.Close()
	if err != nil || n != 2 {
		t.Fatalf("the third node: got %d rows, %v; want the first node's 2", n, err)
	}
	var on string
	if err := third.QueryRowContext(ctx, "SELECT @@global.wsrep_on").Scan(&on); err != nil || on != "1" && on != "ON" {
		t.Errorf("wsrep_on: got %q, %v", on, err)
	}
	if err := KillNode(ctx, home, "gal", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := third.ExecContext(ctx, "INSERT INTO t VALUES (3)"); err != nil {
		t.Errorf("a write after node 2 died: %v, want the other two to go on", err)
	}
	if err := Stop(ctx, home, "gal"); err != nil {
		t.Fatal(err)
	}
	if got, err := Get(home, "gal"); err != nil || got.Running {
		t.Fatalf("after stop: %+v, %v; want it stopped", got, err)
	}
	if _, err := Start(ctx, home, "gal"); err != nil {
		t.Fatalf("start again: %v", err)
	}
	second := open(inst.NodePorts[1])
	if err := second.QueryRowContext(ctx, "SELECT COUNT(*) FROM t").Scan(&n); err != nil || n != 3 {
		t.Errorf("node 2 after the cluster started again: got %d rows, %v; want 3", n, err)
	}
	if err := Down(ctx, home, "gal"); err != nil {
		t.Fatal(err)
	}
	if all, _ := List(home); len(all) != 0 {
		t.Errorf("after down: %d sandboxes, want none", len(all))
	}
}
