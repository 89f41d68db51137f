package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestEntryPoints covers a new user's first commands: the help, the
// version, help for one command, and typos, each with its exit code.
func TestEntryPoints(t *testing.T) {
	versionRE := `^shakedown \d+\.\d+\.\d+ \(commit `
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    string // regexp on stdout
		wantErr    string // regexp on stderr
		notInOut   string
		errOneLine bool
	}{
		{name: "bare shakedown prints the help and fails", args: nil, wantCode: ExitUsage, wantErr: `(?s)usage: shakedown COMMAND.*sysbench +a sysbench command line`},
		{name: "help", args: []string{"help"}, wantOut: `(?s)usage: shakedown COMMAND.*verify`},
		{name: "--help", args: []string{"--help"}, wantOut: `usage: shakedown COMMAND`},
		{name: "--version", args: []string{"--version"}, wantOut: versionRE},
		{name: "-v", args: []string{"-v"}, wantOut: versionRE},
		{name: "version", args: []string{"version"}, wantOut: versionRE},
		{name: "help run is run's help", args: []string{"help", "run"}, wantOut: `(?s)usage: shakedown run WORKLOAD.*oltp_read_write.*--threads`},
		{name: "help verify", args: []string{"help", "verify"}, wantOut: `usage: shakedown verify SOURCE TARGET`},
		{name: "help sandbox", args: []string{"help", "sandbox"}, wantOut: `sandbox`},
		{name: "help targets", args: []string{"help", "targets"}, wantOut: `(?s)--password-file.*MYSQL_PWD.*~/.my.cnf`},
		{name: "help client-io", args: []string{"help", "client-io"}, wantOut: `(?s)--client-io.*auto.*SHAKEDOWN_IOLOOP_LOOPS.*SHAKEDOWN_IOLOOP_BIND.*SHAKEDOWN_IOLOOP_WATCH.*SHAKEDOWN_IOLOOP_BURST.*SHAKEDOWN_IOLOOP_HOLD`},
		{name: "help of a typo", args: []string{"help", "rnu"}, wantCode: ExitUsage, wantErr: `unknown command "rnu" \(did you mean "run"\?\)`, errOneLine: true},
		{name: "command typo", args: []string{"rnu"}, wantCode: ExitUsage, wantErr: `unknown command "rnu" \(did you mean "run"\?\)`, errOneLine: true},
		{name: "command typo with arguments", args: []string{"sandbx", "up", "a"}, wantCode: ExitUsage, wantErr: `unknown command "sandbx" \(did you mean "sandbox"\?\)`, errOneLine: true},
		{name: "workload typo", args: []string{"run", "oltp_read_writ"}, wantCode: ExitUsage, wantErr: `unknown workload "oltp_read_writ" \(did you mean "oltp_read_write"\?\)`, errOneLine: true},
		{name: "option typo", args: []string{"run", "oltp_point_select", "--thread=4"}, wantCode: ExitUsage,
			wantErr: `^shakedown: run oltp_point_select: --thread: unknown option \(did you mean --threads\?\)\n$`},
		{name: "bad whole number", args: []string{"run", "oltp_point_select", "--time=abc"}, wantCode: ExitUsage,
			wantErr: `^shakedown: run oltp_point_select: --time: "abc" is not a whole number\n$`},
		{name: "watch option typo", args: []string{"watch", "mysql://u@127.0.0.1:1/", "--intervl=2s"}, wantCode: ExitUsage,
			wantErr: `^shakedown: watch: --intervl: unknown option \(did you mean --interval\?\)\n$`},
		{name: "a workload without a command", args: []string{"oltp_point_select", "--threads=2"}, wantCode: ExitUsage,
			wantErr: `oltp_point_select is a workload: shakedown run oltp_point_select`},
		{name: "an option before the command", args: []string{"--threads=2"}, wantCode: ExitUsage, wantErr: `options come after the command`},
		{name: "sysbench without its command", args: []string{"sysbench", "oltp_point_select", "--threads", "2"}, wantCode: ExitUsage,
			wantErr: `sysbench: end the line with the command, prepare, run or cleanup.*shakedown sysbench oltp_point_select \[options\] run`},
		{name: "sysbench help", args: []string{"sysbench"}, wantOut: `usage: shakedown sysbench WORKLOAD \[options\] prepare\|run\|cleanup`},
		{name: "sysbench order, bad option", args: []string{"sysbench", "oltp_point_select", "--bogus=1", "run"}, wantCode: ExitUsage, wantErr: `--bogus: unknown option`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLI(context.Background(), tc.args...)
			if code != tc.wantCode {
				t.Errorf("exit code: got %d, want %d (stdout %q, stderr %q)", code, tc.wantCode, out, errOut)
			}
			if tc.wantOut != "" && !regexp.MustCompile(tc.wantOut).MatchString(out) {
				t.Errorf("stdout: got %q, want a match for %s", out, tc.wantOut)
			}
			if tc.wantErr != "" && !regexp.MustCompile(tc.wantErr).MatchString(errOut) {
				t.Errorf("stderr: got %q, want a match for %s", errOut, tc.wantErr)
			}
			if tc.errOneLine && strings.Count(errOut, "\n") != 1 {
				t.Errorf("stderr: got %q, want one line", errOut)
			}
		})
	}
}
