package monitor

import (
	"strings"
	"testing"
	"time"
)

// TestHostSaturatedBlamesTheBusyProcess: a host whose CPU is taken by some
// other process is not put on the server; the server or the client is
// named only when it took most of the busy CPU.
func TestHostSaturatedBlamesTheBusyProcess(t *testing.T) {
	// Two cores, 199 of 200 ticks busy over one second.
	cpu := func(at time.Duration, user float64, extra ...any) *Reading {
		kv := []any{"host.cpu.user", user, "host.cpu.nice", 0, "host.cpu.system", 0, "host.cpu.idle", 0, "host.cpu.iowait", 0,
			"host.cpu.irq", 0, "host.cpu.softirq", 0, "host.cpu.steal", 0}
		return reading(at, append(kv, extra...)...)
	}
	tests := []struct {
		name      string
		prev, cur *Reading
		want      string
	}{
		{"another process", cpu(0, 0, "proc.server.cpu_s", 0.0), cpu(time.Second, 200, "proc.server.cpu_s", 0.05),
			"host CPU saturated by other processes, not the server (its share is in srv%)"},
		{"another process, with shakedown's share", cpu(0, 0, "proc.server.cpu_s", 0.0, "proc.client.cpu_s", 0.0), cpu(time.Second, 200, "proc.server.cpu_s", 0.3, "proc.client.cpu_s", 0.1),
			"host CPU saturated by other processes, not the server (its share is in srv%)"},
		{"the server", cpu(0, 0, "proc.server.cpu_s", 0.0), cpu(time.Second, 200, "proc.server.cpu_s", 1.9),
			"host CPU saturated by the server (srv%)"},
		{"client and server", cpu(0, 0, "proc.server.cpu_s", 0.0, "proc.client.cpu_s", 0.0), cpu(time.Second, 200, "proc.server.cpu_s", 1.1, "proc.client.cpu_s", 0.8),
			"host CPU saturated: the client and the server compete for it (srv%, cli%)"},
		{"shakedown alone, server elsewhere", cpu(0, 0, "proc.client.cpu_s", 0.0), cpu(time.Second, 200, "proc.client.cpu_s", 1.8),
			"host CPU saturated by shakedown itself (cli%"},
		{"server not found", cpu(0, 0), cpu(time.Second, 200),
			"host CPU saturated (the server's process is not on this host or was not found, so its share is not known)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := compute(tc.prev, tc.cur, Limits{Cores: 2})
			if got := s.Attention["cpu_idle"]; !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
