package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseVersion(t *testing.T) {
	tests := []struct {
		in, flavour, version string
	}{
		{"10.11.19-MariaDB-0+deb12u1", "mariadb", "10.11.19"},
		{"5.5.5-10.6.12-MariaDB-log", "mariadb", "10.6.12"},
		{"11.4.2-MariaDB", "mariadb", "11.4.2"},
		{"8.0.36", "mysql", "8.0.36"},
		{"8.4.0-log", "mysql", "8.4.0"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			f, v := parseVersion(tt.in)
			if f != tt.flavour || v != tt.version {
				t.Errorf("got %s %s, want %s %s", f, v, tt.flavour, tt.version)
			}
		})
	}
}

func TestVersionFromBanner(t *testing.T) {
	tests := []struct {
		name, banner, want string
	}{
		{"mariadb", "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)", "10.11.19-MariaDB-0+deb12u1"},
		{"mysql", "/usr/sbin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)", "8.0.36"},
		{"mariadb tarball", "bin/mysqld  Ver 10.5.1 for Linux (MariaDB Server)", "10.5.1-MariaDB"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := versionFromBanner(tt.banner); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestDefaultHome(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"shakedown home", map[string]string{"SHAKEDOWN_HOME": "/sd", "HOME": "/h"}, "/sd/sandboxes"},
		{"home", map[string]string{"HOME": "/h"}, "/h/.shakedown/sandboxes"},
		{"nothing", nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DefaultHome(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"durable", true},
		{"a-b_C9", true},
		{"", false},
		{"a/b", false},
		{"..", false},
		{"a b", false},
		{strings.Repeat("x", 65), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := ValidateName(tt.name)
			if (err == nil) != tt.ok {
				t.Errorf("got %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Errorf("got %v, want it to wrap ErrInvalid", err)
			}
		})
	}
}

func TestSocketPath(t *testing.T) {
	if got, want := socketPath("/home/x/sb/a"), "/home/x/sb/a/mysqld.sock"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	long := "/" + strings.Repeat("d", 120) + "/a"
	got := socketPath(long)
	if len(got) >= 100 || !strings.HasPrefix(got, "/tmp/shakedown-") {
		t.Errorf("got %q, want a short path in /tmp", got)
	}
	if other := socketPath(long + "b"); other == got {
		t.Errorf("got the same socket %q for two directories", got)
	}
}

func TestURL(t *testing.T) {
	i := &Instance{User: User, Database: Database, Port: 3307}
	if got, want := i.URL(), "mysql://shakedown@127.0.0.1:3307/sbtest"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestAlive(t *testing.T) {
	if !alive(os.Getpid(), "") {
		t.Errorf("got our own process not alive")
	}
	if alive(os.Getpid(), "/no/such/datadir") {
		t.Errorf("got our process alive as a server of /no/such/datadir")
	}
	if alive(0, "") || alive(-1, "") {
		t.Errorf("got pid 0 or -1 alive")
	}
}

func TestListIgnoresStrangers(t *testing.T) {
	home := t.TempDir()
	for _, d := range []string{"empty", "bad name"} {
		if err := os.Mkdir(filepath.Join(home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(home, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := List(home)
	if err != nil || len(got) != 0 {
		t.Errorf("got %v, %v; want no sandboxes", got, err)
	}
	got, err = List(filepath.Join(home, "missing"))
	if err != nil || len(got) != 0 {
		t.Errorf("missing home: got %v, %v; want no sandboxes", got, err)
	}
}

func TestDownNotFound(t *testing.T) {
	err := Down(t.Context(), t.TempDir(), "nope")
	if !errors.Is(err, ErrNotFound) {
		t.Errorf("got %v, want ErrNotFound", err)
	}
}

// TestStartErrorNamesNoRemovedFile: a sandbox that failed to start is
// removed with its logs, so the message quotes them instead of naming
// them; an unknown --set variable is bad input, named as --set names it.
func TestStartErrorNamesNoRemovedFile(t *testing.T) {
	dir := t.TempDir()
	errLog := filepath.Join(dir, "error.log")
	console := filepath.Join(dir, "console.log")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(errLog, "2026-11-22 22:14:14 0 [Note] Starting MariaDB\n"+
		"2026-11-22 22:14:16 0 [ERROR] /usr/sbin/mariadbd: unknown variable 'no-such-var=1'\n"+
		"2026-11-22 22:14:16 0 [ERROR] Aborting\n")
	write(console, "[Warning] Could not increase number of max_open_files\n")
	cases := []struct {
		name     string
		kept     bool
		wantKind error
		want     []string
		notWant  []string
	}{
		{"removed", false, ErrInvalid,
			[]string{"the server has no variable no_such_var: check --set no_such_var", "last lines of its error.log (removed with the sandbox):", "unknown variable 'no-such-var=1'"},
			[]string{errLog}},
		{"kept", true, ErrInvalid, []string{"last lines of " + errLog + ":"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := startError("start sandbox bad", errExited, tc.kept, errLog, console)
			if !errors.Is(err, tc.wantKind) {
				t.Errorf("got %v, want it to be %v", err, tc.wantKind)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want %q in it", err, w)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(err.Error(), w) {
					t.Errorf("got %q, want no %q in it", err, w)
				}
			}
		})
	}
	write(errLog, "[Note] x\n2026-11-22 0 [ERROR] InnoDB: cannot open ibdata1\n")
	err := startError("start sandbox bad", errExited, false, errLog, console)
	if !errors.Is(err, errExited) || errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "the server said: InnoDB: cannot open ibdata1") ||
		!strings.Contains(err.Error(), "last lines of its console.log (removed with the sandbox)") {
		t.Errorf("other failure: got %v", err)
	}
}
