package target

import (
	"bytes"
	"crypto/aes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/usage"
)

// fakeHome is a home directory with the option files given, and a getenv
// that names it.
func fakeHome(t *testing.T, files map[string]string, env map[string]string) (string, func(string) string) {
	t.Helper()
	home := t.TempDir()
	for name, text := range files {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return home, func(k string) string {
		if k == "HOME" {
			return home
		}
		return env[k]
	}
}

// withoutSystemFiles keeps the machine's /etc/my.cnf out of a test.
func withoutSystemFiles(t *testing.T) {
	old := systemOptionFiles
	systemOptionFiles = nil
	t.Cleanup(func() { systemOptionFiles = old })
}

func TestCredentialsOrder(t *testing.T) {
	withoutSystemFiles(t)
	myCnf := "[client]\nuser = u\npassword = from-my-cnf\n[mysqld]\npassword = not-a-client-group\n"
	cases := []struct {
		name     string
		url      string
		creds    Credentials
		files    map[string]string
		env      map[string]string
		wantPW   string
		wantFrom string
	}{
		{"the URL first", "mysql://u:from-url@h/db", Credentials{File: "pwfile"}, map[string]string{"pwfile": "from-file\n", ".my.cnf": myCnf},
			map[string]string{"MYSQL_PWD": "from-env"}, "from-url", "the URL"},
		{"then --password-file", "mysql://u@h/db", Credentials{File: "pwfile"}, map[string]string{"pwfile": "from-file\r\nsecond line\n", ".my.cnf": myCnf},
			map[string]string{"MYSQL_PWD": "from-env"}, "from-file", "--password-file"},
		{"then MYSQL_PWD", "mysql://u@h/db", Credentials{}, map[string]string{".my.cnf": myCnf},
			map[string]string{"MYSQL_PWD": "from-env"}, "from-env", "MYSQL_PWD"},
		{"a plan's variable instead of MYSQL_PWD", "mysql://u@h/db", Credentials{EnvVar: "RELAXED_PW"}, nil,
			map[string]string{"MYSQL_PWD": "from-env", "RELAXED_PW": "from-plan-var"}, "from-plan-var", "RELAXED_PW"},
		{"then ~/.my.cnf [client]", "mysql://u@h/db", Credentials{}, map[string]string{".my.cnf": myCnf},
			nil, "from-my-cnf", "~/.my.cnf [client]"},
		{"[shakedown] read too", "mysql://u@h/db", Credentials{}, map[string]string{".my.cnf": "[client]\npassword=theirs\n[shakedown]\npassword=ours\n"},
			nil, "ours", "~/.my.cnf [shakedown]"},
		{"--login-path group read after [client]", "mysql://u@h/db", Credentials{LoginPath: "prod"}, map[string]string{".my.cnf": "[client]\npassword=client-pw\n[prod]\npassword=prod-pw\n"},
			nil, "prod-pw", "~/.my.cnf [prod]"},
		{"--defaults-file alone", "mysql://u@h/db", Credentials{DefaultsFile: "only.cnf"}, map[string]string{"only.cnf": "[client]\npassword=only\n", ".my.cnf": myCnf},
			nil, "only", "~/only.cnf [client]"},
		{"--defaults-extra-file before ~/.my.cnf", "mysql://u@h/db", Credentials{DefaultsExtra: "extra.cnf"}, map[string]string{"extra.cnf": "[client]\npassword=extra\n", ".my.cnf": myCnf},
			nil, "from-my-cnf", "~/.my.cnf [client]"},
		{"--defaults-extra-file alone", "mysql://u@h/db", Credentials{DefaultsExtra: "extra.cnf"}, map[string]string{"extra.cnf": "[client]\npassword=extra\n"},
			nil, "extra", "~/extra.cnf [client]"},
		{"--no-defaults", "mysql://u@h/db", Credentials{NoDefaults: true}, map[string]string{".my.cnf": myCnf}, nil, "", ""},
		{"!include", "mysql://u@h/db", Credentials{}, map[string]string{".my.cnf": "[client]\nport=3306\n!include inc/pw.cnf\n", "inc/pw.cnf": "[client]\npassword=included\n"},
			nil, "included", "~/inc/pw.cnf [client]"},
		{"!includedir", "mysql://u@h/db", Credentials{}, map[string]string{".my.cnf": "!includedir conf.d\n", "conf.d/a.cnf": "[client]\npassword=a\n", "conf.d/b.cnf": "[client]\npassword=b\n", "conf.d/c.txt": "[client]\npassword=c\n"},
			nil, "b", "~/conf.d/b.cnf [client]"},
		{"the last read wins, whatever its group, as with mysql", "mysql://u@h/db", Credentials{LoginPath: "prod"}, map[string]string{".my.cnf": "[prod]\npassword=prod-pw\n[client]\npassword=client-pw\n"},
			nil, "client-pw", "~/.my.cnf [client]"},
		{"a group for another user keeps its password", "mysql://u@h/db", Credentials{}, map[string]string{".my.cnf": "[client]\nuser = root\npassword = roots\n"},
			nil, "", ""},
		{"a group for this user", "mysql://root@h/db", Credentials{}, map[string]string{".my.cnf": "[client]\nuser = root\npassword = roots\n"},
			nil, "roots", "~/.my.cnf [client]"},
		{"a later group for this user wins over one for another", "mysql://u@h/db", Credentials{LoginPath: "u"}, map[string]string{".my.cnf": "[client]\nuser = root\npassword = roots\n[u]\nuser = u\npassword = us\n"},
			nil, "us", "~/.my.cnf [u]"},
		{"nothing anywhere", "mysql://u@h/db", Credentials{}, nil, nil, "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home, getenv := fakeHome(t, tc.files, tc.env)
			c := tc.creds
			for _, p := range []*string{&c.File, &c.DefaultsFile, &c.DefaultsExtra} {
				if *p != "" {
					*p = filepath.Join(home, *p)
				}
			}
			tg, err := Parse(tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Fill(tg, getenv); err != nil {
				t.Fatal(err)
			}
			from := strings.ReplaceAll(tg.PasswordFrom, home, "~")
			if tg.Password != tc.wantPW || !strings.HasPrefix(from, tc.wantFrom) {
				t.Errorf("got %q from %q, want %q from %q", tg.Password, from, tc.wantPW, tc.wantFrom)
			}
		})
	}
}

func TestOptionValues(t *testing.T) {
	cases := []struct{ raw, want string }{
		{"plain", "plain"},
		{"p@ss/w:rd", "p@ss/w:rd"},
		{"abc # a comment", "abc"},
		{`"p#ss word"`, "p#ss word"},
		{`'p#ss'  # comment`, "p#ss"},
		{`"a\"b"`, `a"b`},
		{`tab\there\sand\\`, "tab\there and\\"},
		{"semi;colon", "semi;colon"},
	}
	for _, tc := range cases {
		if got := optionValue(tc.raw); got != tc.want {
			t.Errorf("optionValue(%q): got %q, want %q", tc.raw, got, tc.want)
		}
	}
}

func TestOptionFileQuirks(t *testing.T) {
	withoutSystemFiles(t)
	cases := []struct {
		name   string
		text   string
		mode   os.FileMode
		wantPW string
	}{
		{"quoted with a #", "[client]\npassword = \"p#ss\"  # the real one\n", 0o600, "p#ss"},
		{"a bare password line asks for a prompt: skipped", "[client]\npassword=first\n[client]\npassword\n", 0o600, "first"},
		{"options before any group are not read", "password=nogroup\n[mysqld]\nport=1\n", 0o600, ""},
		{"a world-writable file is skipped, as mysql does", "[client]\npassword=unsafe\n", 0o666, ""},
		{"group names ignore case", "[CLIENT]\npassword=upper\n", 0o600, "upper"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home, getenv := fakeHome(t, map[string]string{".my.cnf": tc.text}, nil)
			if err := os.Chmod(filepath.Join(home, ".my.cnf"), tc.mode); err != nil {
				t.Fatal(err)
			}
			tg := &Target{}
			if err := (&Credentials{}).Fill(tg, getenv); err != nil {
				t.Fatal(err)
			}
			if tg.Password != tc.wantPW {
				t.Errorf("got %q, want %q", tg.Password, tc.wantPW)
			}
		})
	}
}

func TestCredentialsBadFiles(t *testing.T) {
	withoutSystemFiles(t)
	home, getenv := fakeHome(t, map[string]string{"empty": "", "blank": "\nsecond\n"}, nil)
	cases := []struct {
		name  string
		creds Credentials
		want  string
	}{
		{"missing --password-file", Credentials{File: filepath.Join(home, "nope")}, "--password-file: open " + filepath.Join(home, "nope") + ": no such file"},
		{"empty --password-file", Credentials{File: filepath.Join(home, "empty")}, "is empty"},
		{"blank first line", Credentials{File: filepath.Join(home, "blank")}, "its first line is empty"},
		{"missing --defaults-file", Credentials{DefaultsFile: filepath.Join(home, "nope.cnf")}, "option file: stat " + filepath.Join(home, "nope.cnf")},
		{"missing --defaults-extra-file", Credentials{DefaultsExtra: filepath.Join(home, "nope.cnf")}, "no such file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.creds.Fill(&Target{}, getenv)
			if err == nil || !usage.Is(err) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a usage error containing %q", err, tc.want)
			}
		})
	}
}

// encodeLoginFile writes text as mysql_config_editor does.
func encodeLoginFile(t *testing.T, text string) []byte {
	t.Helper()
	key := []byte("0123456789abcdefghij")
	var k16 [16]byte
	for i, b := range key {
		k16[i%16] ^= b
	}
	block, err := aes.NewCipher(k16[:])
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	out.Write([]byte{0, 0, 0, 0})
	out.Write(key)
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		pad := aes.BlockSize - len(line)%aes.BlockSize
		plain := append([]byte(line), bytes.Repeat([]byte{byte(pad)}, pad)...)
		enc := make([]byte, len(plain))
		for i := 0; i < len(plain); i += aes.BlockSize {
			block.Encrypt(enc[i:i+aes.BlockSize], plain[i:i+aes.BlockSize])
		}
		var n [4]byte
		binary.LittleEndian.PutUint32(n[:], uint32(len(enc)))
		out.Write(n[:])
		out.Write(enc)
	}
	return out.Bytes()
}

func TestLoginPathFile(t *testing.T) {
	withoutSystemFiles(t)
	home, getenv := fakeHome(t, map[string]string{".my.cnf": "[client]\npassword=plain\n"}, nil)
	login := encodeLoginFile(t, "[client]\nuser = \"bench\"\npassword = \"login-client\"\n[prod]\npassword = \"login-prod\"\nhost = \"db1\"\n")
	if err := os.WriteFile(filepath.Join(home, ".mylogin.cnf"), login, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		loginPath string
		want      string
	}{
		{"[client] of .mylogin.cnf comes after ~/.my.cnf", "", "login-client"},
		{"--login-path reads its group", "prod", "login-prod"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg := &Target{User: "bench"}
			if err := (&Credentials{LoginPath: tc.loginPath}).Fill(tg, getenv); err != nil {
				t.Fatal(err)
			}
			if tg.Password != tc.want {
				t.Errorf("got %q, want %q", tg.Password, tc.want)
			}
		})
	}
	if err := os.WriteFile(filepath.Join(home, ".mylogin.cnf"), login[:30], 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (&Credentials{}).Fill(&Target{}, getenv); err == nil || !strings.Contains(err.Error(), ".mylogin.cnf") {
		t.Errorf("damaged .mylogin.cnf: got %v, want an error naming it", err)
	}
}

// TestSystemOptionFilesParse reads this machine's option files (Debian's
// /etc/mysql/my.cnf includes directories), which must not fail.
func TestSystemOptionFilesParse(t *testing.T) {
	for _, f := range systemOptionFiles {
		if _, err := readOptionFile(optionFile{path: f}, 0); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}
