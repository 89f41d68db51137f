package monitor

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

func TestProcessCPU(t *testing.T) {
	got, err := processCPU("testdata/proc", 4242)
	if err != nil {
		t.Fatal(err)
	}
	if want := (1234.0 + 567) / 100; math.Abs(got-want) > 1e-9 {
		t.Errorf("got %g s, want %g s", got, want)
	}
	if _, err := processCPU("testdata/proc", 1); err == nil {
		t.Errorf("missing process: got no error, want one")
	}
}

func TestProcessSourceReadsServerAndClient(t *testing.T) {
	r := &Reading{Values: map[string]float64{}}
	if err := (ProcessSource{Proc: "testdata/proc", ServerPID: 4242, Client: true}).Read(context.Background(), nil, r); err != nil {
		t.Fatal(err)
	}
	if got := r.Values["proc.server.cpu_s"]; math.Abs(got-18.01) > 1e-9 {
		t.Errorf("server cpu: got %g, want 18.01", got)
	}
	if got, ok := r.Values["proc.client.cpu_s"]; !ok || got <= 0 {
		t.Errorf("client cpu: got %g (present %v), want > 0", got, ok)
	}
}

func TestFindServerPID(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "mysqld.pid")
	if err := os.WriteFile(pidFile, []byte("4242\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		port    int
		pidFile string
		want    int
	}{
		{"by listening port", 3306, "", 4242},
		{"a proxy on the port gives way to the pid file", 8080, pidFile, 4242},
		{"a proxy on the port is all there is", 8080, "", 777},
		{"by pid file", 0, pidFile, 4242},
		{"nothing listens and no pid file", 9999, "", 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FindServerPID("testdata/proc", tc.port, tc.pidFile)
			if got != tc.want {
				t.Errorf("got pid %d (%v), want %d", got, err, tc.want)
			}
			if tc.want == 0 && err == nil {
				t.Errorf("got no error, want ErrNoProcess")
			}
		})
	}
}

// TestFindServerPIDOfSandbox finds a real server by its port and checks the
// answer against its pid file.
func TestFindServerPIDOfSandbox(t *testing.T) {
	db, ep := openTest(t)
	pidFile := PIDFile(context.Background(), db)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Skipf("pid file %q not readable here: %v", pidFile, err)
	}
	want, _ := strconv.Atoi(string(trimNL(b)))
	got, err := FindServerPID("/proc", ep.Port, "")
	if err != nil || got != want {
		t.Errorf("by port %d: got %d (%v), want %d from %s", ep.Port, got, err, want, pidFile)
	}
}

func trimNL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
