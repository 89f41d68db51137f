package bisect

import (
	"errors"
	"strings"
	"testing"
)

func TestAbsorb(t *testing.T) {
	tests := []struct {
		name     string
		now      map[string]string
		own      []string
		wantErr  string
		wantSync string // sync_binlog as expected afterwards
	}{
		{name: "nothing changed", now: map[string]string{"sync_binlog": "1", "max_connections": "500", "timestamp": "1"}, wantSync: "1"},
		{name: "per-instance values move by themselves", now: map[string]string{"sync_binlog": "1", "max_connections": "500", "timestamp": "99", "gtid_binlog_pos": "0-1-7"}, wantSync: "1"},
		{name: "bisect's own change", now: map[string]string{"sync_binlog": "0", "max_connections": "500"}, own: []string{"sync_binlog"}, wantSync: "0"},
		{name: "normalised alike", now: map[string]string{"sync_binlog": "1", "max_connections": "500.000"}, wantSync: "1"},
		{name: "another session", now: map[string]string{"sync_binlog": "1", "max_connections": "499"}, own: []string{"sync_binlog"},
			wantErr: "changed under bisect: max_connections was 500, now 499 (another session?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := &session{expected: map[string]string{"sync_binlog": "1", "max_connections": "500", "timestamp": "1"}}
			own := map[string]bool{}
			for _, n := range tt.own {
				own[n] = true
			}
			err := s.absorb(tt.now, own)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Errorf("got %v, want ErrChanged with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want no error", err)
			}
			if got := s.expected["sync_binlog"]; got != tt.wantSync {
				t.Errorf("expected sync_binlog: got %s, want %s", got, tt.wantSync)
			}
		})
	}
}

func TestComputed(t *testing.T) {
	for name, want := range map[string]bool{"version": true, "version_comment": true, "have_ssl": true, "innodb_version": true,
		"lower_case_file_system": true, "log_bin": false, "back_log": false, "thread_handling": false} {
		if got := computed(name); got != want {
			t.Errorf("computed(%s): got %v, want %v", name, got, want)
		}
	}
}
