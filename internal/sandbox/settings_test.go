package sandbox

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseSet(t *testing.T) {
	tests := []struct {
		name    string
		set     []string
		want    []setting
		wantErr string // substring; "" = no error
	}{
		{name: "empty"},
		{name: "underscores", set: []string{"innodb_buffer_pool_size=2G"}, want: []setting{{"innodb_buffer_pool_size", "2G"}}},
		{name: "dashes", set: []string{"innodb-buffer-pool-size=2G"}, want: []setting{{"innodb_buffer_pool_size", "2G"}}},
		{name: "leading dashes and case", set: []string{"--Sync-Binlog=1"}, want: []setting{{"sync_binlog", "1"}}},
		{name: "value with = and commas", set: []string{"sql_mode=A,B", "init_connect=SET x=1"},
			want: []setting{{"sql_mode", "A,B"}, {"init_connect", "SET x=1"}}},
		{name: "empty value", set: []string{"init_connect="}, want: []setting{{"init_connect", ""}}},
		{name: "log_bin on", set: []string{"log_bin=ON"}, want: []setting{{"log_bin", "ON"}}},
		{name: "no =", set: []string{"max_connections"}, wantErr: "--set \"max_connections\": want var=value"},
		{name: "no name", set: []string{"=5"}, wantErr: "want var=value"},
		{name: "bad name", set: []string{"max connections=5"}, wantErr: "not a server variable name"},
		{name: "port", set: []string{"port=3307"}, wantErr: "--set port: use --port"},
		{name: "datadir", set: []string{"datadir=/x"}, wantErr: "--set datadir:"},
		{name: "bind address", set: []string{"bind-address=0.0.0.0"}, wantErr: "127.0.0.1 only"},
		{name: "skip log bin", set: []string{"skip-log-bin=1"}, wantErr: "use --set log_bin=OFF"},
		{name: "log_bin with space", set: []string{"log_bin=a b"}, wantErr: "basename without spaces"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSet(tt.set)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got error %v, want one containing %q", err, tt.wantErr)
				}
				if !errors.Is(err, ErrInvalid) {
					t.Errorf("got error %v, want it to wrap ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("got error %v, want none", err)
			}
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMergeSettings(t *testing.T) {
	defaults := []setting{{"a", "1"}, {"b", "2"}}
	got := mergeSettings(defaults, []setting{{"c", "3"}, {"a", "9"}, {"c", "4"}})
	want := []setting{{"a", "9"}, {"b", "2"}, {"c", "4"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if defaults[0].value != "1" {
		t.Errorf("defaults changed: got %v", defaults)
	}
}

func TestServerArgs(t *testing.T) {
	tests := []struct {
		name     string
		settings []setting
		want     []string
	}{
		{"binlog off", []setting{{"max_connections", "10"}, {"log_bin", "OFF"}},
			[]string{"--max-connections=10", "--skip-log-bin"}},
		{"binlog on", []setting{{"log_bin", "ON"}, {"sync_binlog", "1"}},
			[]string{"--log-bin=/d/data/binlog", "--server-id=1", "--sync-binlog=1"}},
		{"binlog 1 with server_id", []setting{{"log_bin", "1"}, {"server_id", "7"}},
			[]string{"--log-bin=/d/data/binlog", "--server-id=7"}},
		{"binlog basename", []setting{{"log_bin", "mybin"}},
			[]string{"--log-bin=mybin", "--server-id=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := serverArgs(tt.settings, "/d/data")
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDefaultsUnderSet(t *testing.T) {
	user, err := parseSet([]string{"log_bin=ON", "sync_binlog=1", "innodb-buffer-pool-size=4G"})
	if err != nil {
		t.Fatal(err)
	}
	args := serverArgs(mergeSettings(defaultSettings, user), "/d/data")
	joined := " " + strings.Join(args, " ") + " "
	for _, want := range []string{" --innodb-buffer-pool-size=4G ", " --log-bin=/d/data/binlog ", " --server-id=1 ", " --sync-binlog=1 ", " --max-connections=5000 "} {
		if !strings.Contains(joined, want) {
			t.Errorf("got args %q, want %q among them", args, want)
		}
	}
	for _, bad := range []string{"--skip-log-bin", "=1G "} {
		if strings.Contains(joined, bad) {
			t.Errorf("got args %q, want no %q", args, bad)
		}
	}
	if got, want := installArgs(mergeSettings(defaultSettings, user)), []string{"--innodb-log-file-size=256M"}; !reflect.DeepEqual(got, want) {
		t.Errorf("install args: got %q, want %q", got, want)
	}
}
