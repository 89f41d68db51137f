package cli

import (
	"context"
	"database/sql"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

// comCounters are the statement counters compared per event.
var comCounters = []string{"Com_select", "Com_update", "Com_insert", "Com_delete", "Com_begin", "Com_commit"}

func comStatus(t *testing.T, db *sql.DB) map[string]int64 {
	t.Helper()
	return globalStatus(t, db, comCounters...)
}

// TestStatementMixMatchesSysbench runs each workload under the real
// sysbench 1.0.20 and under shakedown against the same server and compares
// the server's statement counters per event. Each tool runs N and 2N
// events; the difference cancels what a tool does once per run
// (connecting, detecting the server), leaving exactly N events' worth.
func TestStatementMixMatchesSysbench(t *testing.T) {
	sb, err := exec.LookPath("sysbench")
	if err != nil {
		t.Fatal("sysbench is not installed: run 'make test', which installs Debian's sysbench")
	}
	url := sandboxtest.URL(t)
	admin := adminDB(t, url)
	mustExec(t, admin, "CREATE DATABASE IF NOT EXISTS compat")
	host, port := hostPort(t, url)
	curl := strings.TrimSuffix(url, "/sbtest") + "/compat"
	sbConn := []string{"--mysql-host=" + host, "--mysql-port=" + port, "--mysql-user=shakedown", "--mysql-db=compat"}

	cases := []struct {
		name     string
		workload string
		opts     []string
	}{
		{"read_write defaults", "oltp_read_write", nil},
		{"read_write skip_trx", "oltp_read_write", []string{"--skip_trx=on"}},
		{"read_write range_selects off", "oltp_read_write", []string{"--range_selects=off"}},
		{"read_write counts and tables", "oltp_read_write", []string{"--tables=3", "--point_selects=3", "--simple_ranges=2", "--sum_ranges=0", "--order_ranges=3", "--distinct_ranges=2", "--index_updates=3", "--non_index_updates=2", "--delete_inserts=2", "--range_size=10"}},
		{"read_write text protocol", "oltp_read_write", []string{"--db-ps-mode=disable"}},
		{"read_only", "oltp_read_only", nil},
		{"read_only range_selects off", "oltp_read_only", []string{"--range_selects=off", "--point_selects=4"}},
		{"write_only", "oltp_write_only", nil},
		{"write_only skip_trx delete_inserts", "oltp_write_only", []string{"--skip_trx=on", "--delete_inserts=3"}},
		{"point_select", "oltp_point_select", nil},
		{"insert", "oltp_insert", nil},
		{"insert auto_inc off", "oltp_insert", []string{"--auto_inc=off"}},
		{"read_write secondary, auto_inc off", "oltp_read_write", []string{"--secondary=on", "--auto_inc=off"}},
		{"update_index", "oltp_update_index", []string{"--index_updates=3"}},
		{"update_non_index", "oltp_update_non_index", nil},
		{"delete", "oltp_delete", nil},
		{"select_random_points", "select_random_points", nil},
		{"select_random_ranges", "select_random_ranges", []string{"--number_of_ranges=5", "--delta=3"}},
	}
	const n = 50
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Fresh tables for each case, made the same way for both tools.
			prep := []string{"--tables=3", "--table-size=1000"}
			for _, o := range tc.opts {
				if strings.HasPrefix(o, "--tables=") || strings.HasPrefix(o, "--auto_inc") || strings.HasPrefix(o, "--secondary") {
					prep = append(prep, o)
				}
			}
			if code, out, errOut := runCLI(context.Background(), append([]string{"cleanup", "oltp_read_write", "--target=" + curl}, prep...)...); code != 0 {
				t.Fatalf("cleanup: %s %s", out, errOut)
			}
			if code, out, errOut := runCLI(context.Background(), append([]string{"prepare", "oltp_read_write", "--target=" + curl}, prep...)...); code != 0 {
				t.Fatalf("prepare: %s %s", out, errOut)
			}
			common := append([]string{"--table-size=1000", "--threads=1", "--time=0"}, tc.opts...)
			if !containsPrefix(tc.opts, "--tables=") {
				common = append(common, "--tables=3")
			}
			measure := func(run func(events int)) map[string]int64 {
				before := comStatus(t, admin)
				run(n)
				mid := comStatus(t, admin)
				run(2 * n)
				after := comStatus(t, admin)
				per := map[string]int64{}
				for _, k := range comCounters {
					per[k] = (after[k] - mid[k]) - (mid[k] - before[k])
				}
				return per
			}
			want := measure(func(events int) {
				args := append(append([]string{tc.workload}, sbConn...), common...)
				args = append(args, fmt.Sprintf("--events=%d", events), "run")
				if out, err := exec.Command(sb, args...).CombinedOutput(); err != nil {
					t.Fatalf("sysbench: %v\n%s", err, out)
				}
			})
			got := measure(func(events int) {
				args := append([]string{"run", tc.workload, "--target=" + curl}, common...)
				args = append(args, fmt.Sprintf("--events=%d", events))
				if code, out, errOut := runCLI(context.Background(), args...); code != 0 {
					t.Fatalf("shakedown: exit %d\n%s\n%s", code, out, errOut)
				}
			})
			for _, k := range comCounters {
				if got[k] != want[k] {
					t.Errorf("%s per %d events: got %d, want %d (sysbench)", k, n, got[k], want[k])
				}
			}
			if want["Com_select"]+want["Com_update"]+want["Com_insert"]+want["Com_delete"] == 0 {
				t.Errorf("sysbench sent no statements: %v", want)
			}
		})
	}
}

func containsPrefix(list []string, prefix string) bool {
	for _, s := range list {
		if strings.HasPrefix(s, prefix) {
			return true
		}
	}
	return false
}
