package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/stats"
)

// starvedClient returns the command that runs shakedown with args starved
// of CPU, and its output: on one CPU
// (taskset) with sixteen Go processors (GOMAXPROCS), at the lowest
// priority (nice 19), beside a process that spins on that CPU (at nice 10)
// for the rest of the test, as other work on a client host does. Its
// threads then wait for the CPU whatever the server does: they wanted 16
// to 17 times the CPU they got in 3 s runs of 400 threads, and slap's 200
// clients 19 to 23 times, where the rule marks 3. (A spinner at nice 0
// starved them as well, but left the test binary so little CPU that it
// took seven seconds to start. At the ordinary priority, without the 16
// processors, they wanted 3.1 to 8, and a run now and then went
// unmarked.)
func starvedClient(t *testing.T, args []string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	js, err := json.Marshal(args) // as mainArgsEnv takes them
	if err != nil {
		t.Fatal(err)
	}
	spin := exec.Command("taskset", "-c", "0", "nice", "-n", "10", "sh", "-c", "while :; do :; done")
	if err := spin.Start(); err != nil {
		t.Fatalf("start a process spinning on CPU 0: %v", err)
	}
	t.Cleanup(func() {
		spin.Process.Kill()
		spin.Wait()
	})
	out := &syncBuffer{}
	cmd := exec.CommandContext(t.Context(), "taskset", "-c", "0", "nice", "-n", "19", os.Args[0])
	cmd.Env = append(os.Environ(), mainArgsEnv+"="+string(js), "GOMAXPROCS=16")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = 10 * time.Second
	return cmd, out
}

// TestStarvedClientIsMarked starves the client (see starvedClient) with
// hundreds of threads against a sandbox. The run must say that the client
// limited it, in its text and its document; and a cell of a report built on
// such runs is inconclusive (client-bound), where the same figures not so
// marked are the same.
func TestStarvedClientIsMarked(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset is not installed")
	}
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url), "CREATE DATABASE IF NOT EXISTS starved")
	url = strings.TrimSuffix(url, "/sbtest") + "/starved"
	prepareSmall(t, url)
	path := filepath.Join(t.TempDir(), "r.json")
	cmd, out := starvedClient(t, []string{"run", "oltp_point_select", "--target=" + url, "--tables=1", "--table-size=2000",
		"--threads=400", "--time=3", "--report-interval=1", "--monitor=off", "--json=" + path})
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

	// Enough repeats of a control and of a candidate for a verdict, each
	// this run.
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		bound bool
		want  string
	}{
		{"client-bound", true, "inconclusive (client-bound)"},
		{"not marked", false, "same"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var files []string
			for _, target := range []string{"control", "candidate"} {
				for rep := 1; rep <= stats.MinRunsFor95; rep++ {
					var doc map[string]any
					if err := json.Unmarshal(raw, &doc); err != nil {
						t.Fatal(err)
					}
					doc["target"].(map[string]any)["name"] = target
					doc["client"].(map[string]any)["bound"] = tc.bound
					b, err := json.Marshal(doc)
					if err != nil {
						t.Fatal(err)
					}
					f := filepath.Join(dir, fmt.Sprintf("%s-%d.json", target, rep))
					if err := os.WriteFile(f, b, 0o600); err != nil {
						t.Fatal(err)
					}
					files = append(files, f)
				}
			}
			code, rep, errOut := runCLI(t.Context(), append([]string{"report", "--control", "control", "--format", "json"}, files...)...)
			if code != 0 {
				t.Fatalf("report: exit %d\n%s%s", code, rep, errOut)
			}
			var doc struct {
				Rows []struct {
					Target    string `json:"target"`
					VsControl map[string]struct {
						Note string `json:"note"`
					} `json:"vs_control"`
				} `json:"rows"`
			}
			if err := json.Unmarshal([]byte(rep), &doc); err != nil {
				t.Fatalf("report json: %v\n%s", err, rep)
			}
			found := false
			for _, row := range doc.Rows {
				if row.Target != "candidate" {
					continue
				}
				found = true
				if got := row.VsControl["qps"].Note; got != tc.want {
					t.Errorf("candidate's QPS against the control: got %q, want %q", got, tc.want)
				}
			}
			if !found {
				t.Errorf("report has no candidate row:\n%s", rep)
			}
		})
	}
}

// TestStarvedSlapIsMarked: slap's levels say, as runs do, whether the
// client limited them: a starved client (see starvedClient) with hundreds
// of clients marks its level client-bound in the summary and the document,
// where the same level on an ordinary client carries the figures unmarked.
func TestStarvedSlapIsMarked(t *testing.T) {
	if _, err := exec.LookPath("taskset"); err != nil {
		t.Skip("taskset is not installed")
	}
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url), "CREATE DATABASE IF NOT EXISTS starved_slap")
	host, port := hostPort(t, url)
	slap := func(path string, clients, queries int) []string {
		return []string{"slap", "-h" + host, "-P" + port, "-ushakedown", "--create-schema=starved_slap",
			"--query=SELECT 1", "--concurrency=" + strconv.Itoa(clients), "--number-of-queries=" + strconv.Itoa(queries), "--json=" + path}
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "starved.json")
	// Enough statements that the level lasts past the shortest span the
	// client's load is judged over, however fast the server answers.
	cmd, out := starvedClient(t, slap(path, 200, 40000))
	if err := cmd.Run(); err != nil {
		t.Fatalf("slap on one CPU: %v\n%s", err, out.String())
	}
	levels := readResults(t, path)
	if c := levels[0].Client; c == nil || !c.Bound || c.Cores != 1 || c.IO == nil {
		t.Errorf("starved level: client %+v, want it marked client-bound on 1 core, with its I/O", c)
	} else {
		t.Logf("starved: %s", c.Figures())
	}
	if !strings.Contains(out.String(), "\tCLIENT-BOUND: the client limited this level (") {
		t.Errorf("output lacks the CLIENT-BOUND line:\n%s", out.String())
	}

	path = filepath.Join(dir, "ordinary.json")
	if code, stdout, errOut := runCLI(t.Context(), slap(path, 4, 4000)...); code != 0 {
		t.Fatalf("slap: exit %d\n%s%s", code, stdout, errOut)
	} else if strings.Contains(stdout, "CLIENT-BOUND") {
		t.Errorf("4 clients on an ordinary client marked client-bound:\n%s", stdout)
	}
	if c := readResults(t, path)[0].Client; c == nil || c.Bound || c.CPUS <= 0 || c.QueryLatencyMS <= 0 {
		t.Errorf("ordinary level: client %+v, want its figures (CPU and a statement's latency above 0), not marked", c)
	}
}
