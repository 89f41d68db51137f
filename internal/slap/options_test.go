package slap

import (
	"github.com/shakedown/shakedown/internal/usage"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func parse(t *testing.T, args ...string) *Options {
	t.Helper()
	o := &Options{}
	if err := o.Parse(args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	return o
}

func TestParseLikeTheMySQLClients(t *testing.T) {
	cases := []struct {
		name  string
		args  []string
		check func(o *Options) bool
		want  string
	}{
		{"attached short values", []string{"-ubench", "-pSECRET", "-P3307", "-h10.0.0.1", "-c16,64", "-i2"}, func(o *Options) bool {
			return o.User == "bench" && o.Password == "SECRET" && o.Port == 3307 && o.Host == "10.0.0.1" && o.Concurrency == "16,64" && o.Iterations == 2
		}, "user bench, password SECRET, port 3307, host 10.0.0.1, concurrency 16,64, iterations 2"},
		{"separate short values", []string{"-u", "bench", "-P", "3307", "-c", "8"}, func(o *Options) bool {
			return o.User == "bench" && o.Port == 3307 && o.Concurrency == "8"
		}, "user bench, port 3307, concurrency 8"},
		{"bare -p asks", []string{"-p"}, func(o *Options) bool { return o.PasswordPrompt && o.Password == "" }, "a prompt"},
		{"--password alone asks", []string{"--password"}, func(o *Options) bool { return o.PasswordPrompt }, "a prompt"},
		{"--password= is an empty password", []string{"--password="}, func(o *Options) bool { return !o.PasswordPrompt && o.Password == "" && o.Changed("password") }, "an empty password"},
		{"password with = in it", []string{"-p=x=y"}, func(o *Options) bool { return o.Password == "=x=y" }, `password "=x=y"`},
		{"underscores", []string{"--create_schema=test", "--number_of_queries=20"}, func(o *Options) bool {
			return o.CreateSchema == "test" && o.NumberOfQueries == 20
		}, "schema test, 20 queries"},
		{"unique prefix", []string{"--concur=4", "--iter=3"}, func(o *Options) bool { return o.Concurrency == "4" && o.Iterations == 3 }, "concurrency 4, iterations 3"},
		{"skip and enable", []string{"--auto-generate-sql", "--skip-auto-generate-sql", "--enable-no-drop"}, func(o *Options) bool {
			return !o.AutoGenerate && o.NoDrop
		}, "auto-generate off, no-drop on"},
		{"bool values", []string{"-a", "--only-print=TRUE", "--silent=0"}, func(o *Options) bool {
			return o.AutoGenerate && o.OnlyPrint && !o.Silent
		}, "auto-generate, only-print, not silent"},
		{"loose unknown ignored", []string{"--loose-frobnicate=3", "--loose-iterations=5"}, func(o *Options) bool { return o.Iterations == 5 }, "iterations 5"},
		{"verbose counts", []string{"-vvv"}, func(o *Options) bool { return o.Verbose == 3 }, "verbose 3"},
		{"csv without a file", []string{"--csv"}, func(o *Options) bool { return o.CSV == "-" }, "csv to standard output"},
		{"csv to a file", []string{"--csv=out.csv"}, func(o *Options) bool { return o.CSV == "out.csv" }, "csv to out.csv"},
		{"help", []string{"-?"}, func(o *Options) bool { return o.Help }, "help"},
		{"delimiter default is a newline", nil, func(o *Options) bool {
			return o.Delimiter == "\n" && o.CreateSchema == "mysqlslap" && o.Iterations == 1
		}, "mysqlslap's defaults"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := parse(t, tc.args...)
			if !tc.check(o) {
				t.Errorf("got %+v, want %s", *o, tc.want)
			}
		})
	}
}

func TestParseRefuses(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown option", []string{"--frobnicate"}, "unknown flag: --frobnicate"},
		{"password after a space", []string{"-p", "SECRET"}, "-p takes its password attached"},
		{"stray argument", []string{"extra"}, `unexpected argument "extra"`},
		{"ambiguous prefix", []string{"--auto-generate-sql-unique=3"}, "unknown flag"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Options{}).Parse(tc.args)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func noEnv(string) string { return "" }

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	empty := write("empty.sql", "  \n")
	comments := write("comments.sql", "-- nothing but a comment;\n")
	bad := write("bad.sql", "select 1;\nselect 2;\nselect 3;\nselect 4;\nselect 5;\nselect 6;\nselect \"seven;\nselect 8;\n")
	nodelim := write("nodelim.sql", "select 1\nselect 2\n")
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"no query", nil, []string{"nothing to run", "--query"}},
		{"empty file", []string{"--query=" + empty}, []string{"--query " + empty, "empty"}},
		{"only comments", []string{"--query=" + comments, "--delimiter=;"}, []string{"holds no statements"}},
		{"syntax error in statement 7", []string{"--query=" + bad, "--delimiter=;"}, []string{bad, "statement 7 (line 7)", `unterminated quoted string (")`, `select "seven;`}},
		{"delimiter never occurs", []string{"--query=" + nodelim, "--delimiter=;"}, []string{nodelim, `the delimiter ";" never occurs`}},
		{"missing file", []string{"--query=" + filepath.Join(dir, "nope.sql")}, []string{"no such file"}},
		{"pre-query error", []string{"--query=select 1", "--pre-query=select 'x", "--delimiter=;"}, []string{"--pre-query", "statement 1", "unterminated"}},
		{"zero clients", []string{"--query=select 1", "-c", "4,0"}, []string{"--concurrency", `"0"`}},
		{"zero iterations", []string{"--query=select 1", "-i", "0"}, []string{"--iterations must be >= 1"}},
		{"bad load type", []string{"-a", "--auto-generate-sql-load-type=readonly"}, []string{"--auto-generate-sql-load-type must be"}},
		{"key without a key", []string{"-a", "--auto-generate-sql-load-type=key"}, []string{"needs a primary key"}},
		{"auto with query", []string{"-a", "--query=select 1"}, []string{"cannot be used with --create or --query"}},
		{"execute number and queries", []string{"-a", "--auto-generate-sql-execute-number=3", "--number-of-queries=9"}, []string{"not both"}},
		{"both keys", []string{"-a", "--auto-generate-sql-guid-primary", "--auto-generate-sql-add-autoincrement"}, []string{"not both"}},
		{"bad columns", []string{"-a", "-x", "many"}, []string{"--number-char-cols"}},
		{"bad ignore list", []string{"--query=select 1", "--ignore-errors=deadlock"}, []string{"--ignore-errors", "deadlock"}},
		{"bare -p", []string{"--query=select 1", "-p"}, []string{"-p without a password"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := parse(t, tc.args...)
			_, err := Load(o, noEnv)
			if err == nil {
				t.Fatalf("got no error, want one containing %q", tc.want)
			}
			if _, ok := err.(*usage.Error); !ok {
				t.Errorf("got %T, want a *usage.Error (exit code 2)", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestLimitPerClient(t *testing.T) {
	cases := []struct {
		name string
		args []string
		c    int
		want uint64
	}{
		{"statements of the query", []string{"--query=begin;update t set a=1;commit;", "--delimiter=;"}, 16, 3},
		{"number of queries divided", []string{"--query=select 1", "--number-of-queries=20000"}, 16, 1250},
		{"rounded down", []string{"--query=select 1", "--number-of-queries=20000"}, 64, 312},
		{"fewer queries than clients: one pass", []string{"--query=select 1", "--number-of-queries=3"}, 4, 0},
		{"auto-generated: one pass", []string{"-a"}, 4, 0},
		{"execute number", []string{"-a", "--auto-generate-sql-execute-number=7"}, 4, 7},
		{"init command alone: no statements to repeat", []string{"--init-command=set @a = 1", "--number-of-queries=40"}, 4, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Load(parse(t, tc.args...), noEnv)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.limit(tc.c); got != tc.want {
				t.Errorf("got %d queries per client, want %d", got, tc.want)
			}
		})
	}
}

func TestTargetLikeTheMySQLClients(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"USER": "alice", "MYSQL_PWD": "from-env"}[k]
	}
	cases := []struct {
		name                         string
		args                         []string
		wantEP, wantUser, wantPasswd string
	}{
		{"defaults: the socket, the login user", nil, DefaultSocket, "alice", "from-env"},
		{"a port means TCP", []string{"-P3307"}, "localhost:3307", "alice", "from-env"},
		{"a host means TCP", []string{"-h127.0.0.1"}, "127.0.0.1:3306", "alice", "from-env"},
		{"protocol tcp", []string{"--protocol=tcp"}, "localhost:3306", "alice", "from-env"},
		{"socket", []string{"-S/tmp/my.sock", "-ubob", "-pPW"}, "/tmp/my.sock", "bob", "PW"},
		{"target URL", []string{"--target=mysql://u:p@db1:4000/x"}, "db1:4000", "u", "p"},
		{"options override the URL", []string{"--target=mysql://u:p@db1:4000/x", "-P4001", "-uv"}, "db1:4001", "v", "p"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Load(parse(t, append([]string{"--query=select 1"}, tc.args...)...), env)
			if err != nil {
				t.Fatal(err)
			}
			if got := b.ep.String(); got != tc.wantEP {
				t.Errorf("endpoint: got %s, want %s", got, tc.wantEP)
			}
			if b.tgt.User != tc.wantUser || b.tgt.Password != tc.wantPasswd {
				t.Errorf("got user %q password %q, want %q and %q", b.tgt.User, b.tgt.Password, tc.wantUser, tc.wantPasswd)
			}
			if b.tgt.DB != "mysqlslap" {
				t.Errorf("database: got %q, want the --create-schema default mysqlslap", b.tgt.DB)
			}
		})
	}
}
