package sandbox

import (
	"context"
	"net"
	"testing"
)

// TestUpRetriesTakenPort makes the first picked port one that is taken, as
// when another test binary binds it first: Up must pick again.
func TestUpRetriesTakenPort(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a database server: skipped with -short")
	}
	if _, err := FindServer(t.Context(), ""); err != nil {
		t.Fatalf("%v\nrun 'make test', which installs mariadb-server", err)
	}
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	taken := busy.Addr().(*net.TCPAddr).Port
	calls := 0
	pickPort = func() (int, error) {
		calls++
		if calls == 1 {
			return taken, nil
		}
		return freePort()
	}
	defer func() { pickPort = freePort }()

	home := t.TempDir()
	inst, err := Up(t.Context(), Options{Name: "retry", Home: home, DieWithParent: true,
		Set: []string{"innodb_buffer_pool_size=128M", "innodb_log_file_size=48M"}})
	if err != nil {
		t.Fatalf("up: %v", err)
	}
	defer func() { _ = Down(context.Background(), home, "retry") }()
	if calls != 2 || inst.Port == taken {
		t.Errorf("got %d picks and port %d, want 2 picks and a port other than %d", calls, inst.Port, taken)
	}
}
