package readiness

import (
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/vars"
)

// TestDowngrades: a target less durable than the source, variable by
// variable; as durable or more is no downgrade.
func TestDowngrades(t *testing.T) {
	tests := []struct {
		name, variable, source, target string
		risk                           string // "" when it is no downgrade
	}{
		{"redo log synced once a second", "innodb_flush_log_at_trx_commit", "1", "0", "up to a second of commits lost in a crash, the server's own included"},
		{"redo log written at commit, synced once a second", "innodb_flush_log_at_trx_commit", "1", "2", "up to a second of commits lost in a crash of the machine"},
		{"2 to 0", "innodb_flush_log_at_trx_commit", "2", "0", "the server's own included"},
		{"more durable redo log", "innodb_flush_log_at_trx_commit", "2", "1", ""},
		{"MariaDB's 3 is as durable as 1", "innodb_flush_log_at_trx_commit", "1", "3", ""},
		{"binary log left to the OS", "sync_binlog", "1", "0", "the binary log is synced when the operating system decides"},
		{"binary log synced every 100 groups", "sync_binlog", "1", "100", "synced every 100 commit groups"},
		{"binary log synced more often", "sync_binlog", "0", "1", ""},
		{"binary log synced every 10 groups rather than 100", "sync_binlog", "100", "10", ""},
		{"no doublewrite", "innodb_doublewrite", "ON", "OFF", "pages torn by a crash cannot be repaired"},
		{"doublewrite detects only", "innodb_doublewrite", "ON", "DETECT_ONLY", "pages torn by a crash cannot be repaired"},
		{"doublewrite back on", "innodb_doublewrite", "OFF", "ON", ""},
		{"never synced", "innodb_flush_method", "O_DIRECT", "nosync", "never synced"},
		{"another flush method", "innodb_flush_method", "fsync", "O_DIRECT", ""},
		{"missing on the target", "sync_binlog", "1", vars.Missing, ""},
		{"not a durability variable", "innodb_buffer_pool_size", "1073741824", "0", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Downgrades([]vars.Difference{{Name: tc.variable, Values: []string{tc.source, tc.target}, Relevant: true}})
			if tc.risk == "" {
				if len(got) != 0 {
					t.Errorf("got %+v, want no downgrade", got)
				}
				return
			}
			if len(got) != 1 || got[0].Variable != tc.variable || got[0].Source != tc.source || got[0].Target != tc.target || !strings.Contains(got[0].Risk, tc.risk) {
				t.Errorf("got %+v, want %s %s -> %s risking %q", got, tc.variable, tc.source, tc.target, tc.risk)
			}
		})
	}
}

// TestJudgeVariables: the verdict the page and the rehearsal's vars step
// share.
func TestJudgeVariables(t *testing.T) {
	outcome, summary, downgrades := JudgeVariables(lessDurable)
	if outcome != store.OutcomeWarn || len(downgrades) != 2 ||
		summary != "less durable than the source: innodb_flush_log_at_trx_commit 1 -> 0, sync_binlog 1 -> 0; 3 differing, 3 of them known to change behaviour or performance" {
		t.Errorf("less durable: got %s %q with %d downgrades, want warn naming both", outcome, summary, len(downgrades))
	}
	outcome, summary, _ = JudgeVariables(lessDurable[2:])
	if outcome != store.OutcomePass || summary != "1 differing, 1 of them known to change behaviour or performance, none less durable than the source's" {
		t.Errorf("a larger buffer pool: got %s %q, want pass", outcome, summary)
	}
}

// A variable the target's flavour ignores is no downgrade: TiDB keeps
// sync_binlog and has no binlog of the MySQL kind to sync.
func TestDowngradesIgnoredByFlavour(t *testing.T) {
	maria := map[string]string{"version": "10.11.19-MariaDB", "sync_binlog": "1", "innodb_flush_log_at_trx_commit": "1"}
	tidb := map[string]string{"version": "8.0.11-TiDB-v8.4.0", "sync_binlog": "0", "innodb_flush_log_at_trx_commit": "0"}
	if got := Downgrades(vars.Diff(maria, tidb)); len(got) != 0 {
		t.Errorf("MariaDB against TiDB: got %+v, want none", got)
	}
	relaxed := map[string]string{"version": "10.11.19-MariaDB", "sync_binlog": "0", "innodb_flush_log_at_trx_commit": "1"}
	if got := Downgrades(vars.Diff(maria, relaxed)); len(got) != 1 || got[0].Variable != "sync_binlog" {
		t.Errorf("MariaDB against a relaxed MariaDB: got %+v, want sync_binlog", got)
	}
}
