package cli

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/bisect"
)

func TestBisectSplitArgs(t *testing.T) {
	tests := []struct {
		name               string
		args               []string
		own, targets, rest []string
		wantErr            string
	}{
		{name: "targets, own and run options",
			args:    []string{"mysql://a@h:1/d", "mysql://b@h:2/d", "--workload", "oltp_write_only", "--threads=16", "--time", "2", "--tables=4", "--allow-set-global", "--json", "out.json"},
			own:     []string{"--workload", "oltp_write_only", "--threads=16", "--allow-set-global", "--json", "out.json"},
			targets: []string{"mysql://a@h:1/d", "mysql://b@h:2/d"},
			rest:    []string{"--time", "2", "--tables=4"}},
		{name: "underscores and -h", args: []string{"--allow_set_global", "--max_repeats=4", "-h", "--table_size=10"},
			own: []string{"--allow_set_global", "--max_repeats=4", "-h"}, rest: []string{"--table_size=10"}},
		{name: "a target option", args: []string{"--mysql-host=db"}, wantErr: "--mysql-host: give the servers as CONTROL and CANDIDATE URLs"},
		{name: "store", args: []string{"--store", "x.db"}, wantErr: "--store:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &bisectCmd{}
			own, targets, rest, err := bisect.SplitArgs(c.flags(), tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(own, tt.own) || !reflect.DeepEqual(targets, tt.targets) || !reflect.DeepEqual(rest, tt.rest) {
				t.Errorf("got own %q targets %q rest %q, want %q %q %q", own, targets, rest, tt.own, tt.targets, tt.rest)
			}
		})
	}
}

func TestBisectBadInput(t *testing.T) {
	a, b := "mysql://u@127.0.0.1:1/d", "mysql://u@127.0.0.1:2/d"
	missing := filepath.Join(t.TempDir(), "none.json")
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no targets", []string{"--workload", "oltp_write_only", "--threads", "4"}, "give two target URLs, CONTROL then CANDIDATE (got 0)"},
		{"three targets", []string{a, b, a, "--workload", "oltp_write_only", "--threads", "4"}, "(got 3)"},
		{"no workload", []string{a, b, "--threads", "4"}, "--workload is required"},
		{"no threads", []string{a, b, "--workload", "oltp_write_only"}, "--threads must be >= 1"},
		{"three repeats", []string{a, b, "--workload", "oltp_write_only", "--threads=4", "--repeats=3"}, "--repeats must be >= 4"},
		{"bad budget", []string{a, b, "--workload", "oltp_write_only", "--threads=4", "--budget=soon"}, "invalid argument \"soon\""},
		{"unknown workload", []string{a, b, "--workload", "oltp_nothing", "--threads=4"}, `unknown workload "oltp_nothing"`},
		{"bad run option", []string{a, b, "--workload", "oltp_write_only", "--threads=4", "--time=-1"}, "--time must be >= 0"},
		{"target option", []string{a, b, "--workload", "oltp_write_only", "--threads=4", "--mysql-port=3306"}, "--mysql-port: give the servers"},
		{"undo file missing", []string{"--undo", missing}, "no such file"},
		{"undo with run options", []string{"--undo", missing, "--time=2"}, `unexpected "--time=2"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(context.Background(), append([]string{"vars", "bisect"}, tc.args...)...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("got exit %d and %q, want %d and %q", code, stderr, ExitUsage, tc.want)
			}
		})
	}
}

func TestBisectHelp(t *testing.T) {
	code, out, _ := runCLI(context.Background(), "vars", "bisect", "--help")
	for _, want := range []string{"vars bisect CONTROL CANDIDATE", "--allow-set-global", "--undo FILE", "--budget"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("got %d and %q, want 0 and the usage with %q", code, out, want)
		}
	}
}
