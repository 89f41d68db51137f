package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

// runCLIEnv runs one command line in-process with these environment
// variables.
func runCLIEnv(ctx context.Context, vars map[string]string, args ...string) (code int, stdout, stderr string) {
	var out, errOut syncBuffer
	env := &Env{Stdin: bytes.NewReader(nil), Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return vars[k] }}
	code = Main(ctx, env, args)
	return code, out.String(), errOut.String()
}

// scopeServer makes, on the shared test server, a user with a password
// that holds '/' and '#' who sees two databases of one table each. It
// returns the user's URL without a database or password.
func scopeServer(t *testing.T) (base, password string) {
	t.Helper()
	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	admin, err := tg.OpenNoDB(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	password = "Sc0pe/pw#1"
	drop := []string{"DROP DATABASE IF EXISTS scope_a", "DROP DATABASE IF EXISTS scope_b", "DROP USER IF EXISTS 'scope_u'@'%'"}
	vfyExec(t, admin, drop...)
	t.Cleanup(func() {
		for _, s := range drop {
			admin.Exec(s)
		}
	})
	vfyExec(t, admin,
		"CREATE DATABASE scope_a", "CREATE DATABASE scope_b",
		"CREATE TABLE scope_a.t1 (id INT PRIMARY KEY, v VARCHAR(10))", "INSERT INTO scope_a.t1 VALUES (1,'a'),(2,'b')",
		"CREATE TABLE scope_b.t2 (id INT PRIMARY KEY)", "INSERT INTO scope_b.t2 VALUES (1)",
		"CREATE USER 'scope_u'@'%' IDENTIFIED BY '"+password+"'",
		"GRANT ALL ON scope_a.* TO 'scope_u'@'%'", "GRANT ALL ON scope_b.* TO 'scope_u'@'%'",
		"GRANT PROCESS, RELOAD ON *.* TO 'scope_u'@'%'")
	ep := tg.Endpoints()[0]
	return "mysql://scope_u@" + ep.String(), password
}

// TestPasswordsAndDatabases: every command finds a password in the URL,
// --password-file, MYSQL_PWD and ~/.my.cnf; says where a refused one came
// from with hints it accepts; and reads a URL without a database by its
// own rule, refusing databases that do not exist.
func TestPasswordsAndDatabases(t *testing.T) {
	base, pw := scopeServer(t)
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "pw")
	if err := os.WriteFile(pwFile, []byte(pw+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".my.cnf"), []byte("[client]\npassword = \""+pw+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pwdEnv := map[string]string{"MYSQL_PWD": pw}
	homeEnv := map[string]string{"HOME": home}
	encoded := strings.Replace(base, "scope_u@", "scope_u:Sc0pe%2Fpw%231@", 1)
	plan := filepath.Join(dir, "plan.yaml")
	if err := os.WriteFile(plan, []byte("targets:\n  - name: a\n    url: "+base+"/scope_a\n    role: control\nworkloads: [ping]\nthreads: [1]\ntime: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	resultJSON := filepath.Join(dir, "ping.json")
	cases := []struct {
		name     string
		env      map[string]string
		args     []string
		wantCode int
		want     []string // in stdout+stderr
		notWant  []string
	}{
		{"verify: no database means every user database", pwdEnv, []string{"verify", base + "/", base}, ExitOK,
			[]string{"scope_a.t1", "scope_b.t2", "2 tables compared"}, nil},
		{"verify: a URL without a database takes the other's", pwdEnv, []string{"verify", base + "/scope_a", base + "/"}, ExitOK,
			[]string{"scope_a.t1", "1 table compared"}, []string{"scope_b"}},
		{"verify: --databases that do not exist", pwdEnv, []string{"verify", base + "/", base + "/", "--databases", "scope_a,nosuch"}, ExitUsage,
			[]string{`database "nosuch" does not exist`, "scope_a, scope_b"}, nil},
		{"verify: password percent-encoded in the URL", nil, []string{"verify", encoded + "/scope_a", encoded + "/scope_a"}, ExitOK, []string{"1 table compared"}, nil},
		{"verify: --password-file", nil, []string{"verify", base + "/scope_a", base + "/scope_a", "--password-file", pwFile}, ExitOK, []string{"1 table compared"}, nil},
		{"verify: ~/.my.cnf", homeEnv, []string{"verify", base + "/scope_a", base + "/scope_a"}, ExitOK, []string{"1 table compared"}, nil},
		{"verify: no password anywhere", nil, []string{"verify", base + "/scope_a", base + "/scope_a"}, ExitFailure,
			[]string{`access denied for user "scope_u" (no password given)`, "--password-file, MYSQL_PWD or ~/.my.cnf"}, []string{"--mysql-password"}},
		{"verify: a wrong password says where it came from", map[string]string{"MYSQL_PWD": "wrong"}, []string{"verify", base + "/scope_a", base + "/scope_a"}, ExitFailure,
			[]string{"(password from MYSQL_PWD)"}, nil},
		{"analyze: no database means every user database", pwdEnv, []string{"analyze", base + "/"}, ExitOK,
			[]string{"scope_a.t1", "scope_b.t2", "analyzed 2 tables in scope_a, scope_b"}, nil},
		{"analyze: --databases nosuch", pwdEnv, []string{"analyze", base + "/", "--databases", "nosuch"}, ExitUsage,
			[]string{`analyze: --databases: database "nosuch" does not exist`}, []string{"analyzed"}},
		{"analyze: a URL's database that does not exist", pwdEnv, []string{"analyze", base + "/scope_c"}, ExitUsage,
			[]string{`database "scope_c" does not exist`, `did you mean "scope_a"?`}, nil},
		{"analyze: tables that match nothing", pwdEnv, []string{"analyze", base + "/scope_a", "--tables", "nosuch"}, ExitUsage,
			[]string{"no table of scope_a matches --tables"}, nil},
		{"vars: a database that does not exist", pwdEnv, []string{"vars", "diff", base + "/nosuch", base + "/"}, ExitUsage,
			[]string{`database "nosuch" does not exist`}, nil},
		{"vars: --password-file", nil, []string{"vars", "diff", base + "/", base + "/", "--password-file", pwFile}, ExitOK, []string{"No differences"}, nil},
		{"watch: a database that does not exist", pwdEnv, []string{"watch", base + "/nosuch", "--count", "1"}, ExitUsage,
			[]string{`database "nosuch" does not exist`}, nil},
		{"watch: ~/.my.cnf", homeEnv, []string{"watch", base + "/", "--count", "1", "--interval", "100ms"}, ExitOK, []string{"watching"}, nil},
		{"run: MYSQL_PWD", pwdEnv, []string{"run", "ping", "--target", base + "/scope_a", "--time", "1", "--json", resultJSON}, ExitOK,
			[]string{"queries:", "(ping, shakedown's own workload)"}, []string{"sysbench-compatible"}},
		{"run: --password-file", nil, []string{"run", "ping", "--target", base + "/scope_a", "--time", "1", "--password-file", pwFile}, ExitOK, []string{"queries:"}, nil},
		{"run: ~/.my.cnf", homeEnv, []string{"run", "ping", "--mysql-host", "127.0.0.1", "--mysql-port", strings.Split(base, ":")[2], "--mysql-user", "scope_u", "--mysql-db", "scope_a", "--time", "1"}, ExitOK, []string{"queries:"}, nil},
		{"slap: ~/.my.cnf", homeEnv, []string{"slap", "--target", base + "/", "--create-schema=scope_a", "--query=select 1", "--concurrency=1", "--iterations=1"}, ExitOK, []string{"Benchmark"}, nil},
		{"sweep: MYSQL_PWD for a target without password_env", pwdEnv, []string{"sweep", plan, "--dry-run", "--store", filepath.Join(dir, "s.db")}, ExitOK, []string{"control"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runCLIEnv(context.Background(), tc.env, tc.args...)
			all := out + errOut
			if code != tc.wantCode {
				t.Errorf("exit code: got %d, want %d\n%s", code, tc.wantCode, all)
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("output: want %q in\n%s", w, all)
				}
			}
			for _, w := range append(tc.notWant, pw, "Sc0pe") {
				if strings.Contains(all, w) {
					t.Errorf("output: %q should not be there:\n%s", w, all)
				}
			}
		})
	}
	// The result records the user --target used, not --mysql-user's default.
	b, err := os.ReadFile(resultJSON)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Options map[string]string `json:"options"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Options["mysql-user"] != "scope_u" || res.Options["mysql-db"] != "scope_a" {
		t.Errorf("result options: got mysql-user %q, mysql-db %q; want scope_u, scope_a", res.Options["mysql-user"], res.Options["mysql-db"])
	}
	if strings.Contains(string(b), pw) {
		t.Errorf("the result holds the password")
	}
}
