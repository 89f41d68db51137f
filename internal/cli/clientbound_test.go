package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// TestStarvedClientIsMarked starves the client: shakedown on one CPU
// (taskset) with hundreds of threads against a sandbox. The run must say
// that the client limited it, in its text and its document.
func TestStarvedClientIsMarked(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset is not installed")
	}
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url), "CREATE DATABASE IF NOT EXISTS starved")
	url = strings.TrimSuffix(url, "/sbtest") + "/starved"
	prepareSmall(t, url)
	path := filepath.Join(t.TempDir(), "r.json")
	args, err := json.Marshal([]string{"run", "oltp_point_select", "--target=" + url, "--tables=1", "--table-size=2000",
		"--threads=400", "--time=3", "--report-interval=1", "--monitor=off", "--json=" + path})
	if err != nil {
		t.Fatal(err)
	}
	var out syncBuffer
	cmd := exec.CommandContext(t.Context(), "taskset", "-c", "0", os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+string(args))
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("run on one CPU: %v\n%s", err, out.String())
	}
	r := readResult(t, path)
	if r.Client == nil {
		t.Fatalf("got no client figures in the document, want them")
	}
	t.Logf("client: %+v", *r.Client)
	if !r.Client.Bound {
		t.Errorf("got a run not marked client-bound (%s), want it marked", r.Client.Figures())
	}
	if r.Client.Cores != 1 {
		t.Errorf("got %d cores, want 1 (taskset -c 0)", r.Client.Cores)
	}
	if !strings.Contains(out.String(), "CLIENT-BOUND:") {
		t.Errorf("output lacks the CLIENT-BOUND line:\n%s", out.String())
	}
}
