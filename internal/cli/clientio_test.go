package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/result"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// TestSlapTakesTheIOTuning: the loops' tuning comes from the environment
// through Env, drives slap's loops in place of the rules, and is recorded
// with each level and said on its Client I/O line; without it, nothing is
// recorded.
func TestSlapTakesTheIOTuning(t *testing.T) {
	url := sandboxtest.URL(t)
	mustExec(t, adminDB(t, url), "CREATE DATABASE IF NOT EXISTS slaptuned")
	host, port := hostPort(t, url)
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		env  map[string]string
		line string
		want *result.IOTuning
	}{
		{"tuned", map[string]string{"SHAKEDOWN_IOLOOP_LOOPS": "3", "SHAKEDOWN_IOLOOP_BURST": "8", "SHAKEDOWN_IOLOOP_BIND": "off"},
			"Client I/O: 3 I/O loops, holding their processors (--client-io loop; tuned: loops 3, bind off, burst 8)", &result.IOTuning{Loops: 3, Bind: "off", Burst: 8}},
		{"by the rules", nil, "(--client-io loop)", nil},
	} {
		path := filepath.Join(dir, tc.name+".json")
		code, out, stderr := runCLIEnv(context.Background(), tc.env, "slap", "-h"+host, "-P"+port, "-ushakedown", "--create-schema=slaptuned",
			"--query=SELECT 1", "--concurrency=6", "--number-of-queries=60", "--client-io=loop", "--json="+path)
		if code != 0 {
			t.Fatalf("%s: slap: exit %d\n%s\n%s", tc.name, code, out, stderr)
		}
		if !strings.Contains(out, tc.line) {
			t.Errorf("%s: the summary lacks %q:\n%s", tc.name, tc.line, out)
		}
		c := readResults(t, path)[0].Client
		if c == nil || c.IO == nil {
			t.Fatalf("%s: got client %+v, want its I/O recorded", tc.name, c)
		}
		if got := c.IO.Tuning; (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: recorded tuning %+v, want %+v", tc.name, got, tc.want)
		}
	}
}

// TestRunTakesTheIOTuning: run reads the same tuning, shows it on its
// Client I/O line and records it with the result.
func TestRunTakesTheIOTuning(t *testing.T) {
	url := sandboxtest.URL(t)
	dir := t.TempDir()
	data := []string{"--target=" + url, "--tables=1", "--table-size=100"}
	if code, out, stderr := runCLI(context.Background(), append([]string{"prepare", "oltp_point_select"}, data...)...); code != 0 {
		t.Fatalf("prepare: exit %d\n%s\n%s", code, out, stderr)
	}
	path := filepath.Join(dir, "run.json")
	env := map[string]string{"SHAKEDOWN_IOLOOP_LOOPS": "2", "SHAKEDOWN_IOLOOP_WATCH": "off"}
	code, out, stderr := runCLIEnv(context.Background(), env, append([]string{"run", "oltp_point_select", "--threads=4", "--time=1",
		"--client-io=loop", "--json=" + path}, data...)...)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, stderr)
	}
	if want := "(--client-io loop; tuned: loops 2, watch off)"; !strings.Contains(out, want) {
		t.Errorf("the header lacks %q:\n%s", want, out)
	}
	var res result.Result
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if c := res.Client; c == nil || c.IO == nil || c.IO.Tuning == nil || c.IO.Tuning.Loops != 2 || c.IO.Tuning.Watch != "off" {
		t.Errorf("recorded client I/O %+v, want the tuning: loops 2, watch off", res.Client)
	}
}
