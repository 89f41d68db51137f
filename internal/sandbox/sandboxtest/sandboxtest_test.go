package sandboxtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestStale(t *testing.T) {
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		owner string // "" = no owner file
		age   time.Duration
		want  bool
	}{
		{"ours", strconv.Itoa(os.Getpid()), 0, false},
		{"parent alive", strconv.Itoa(os.Getppid()), 0, false},
		{"owner gone", strconv.Itoa(dead.Process.Pid), 0, true},
		{"garbage owner", "x", 0, true},
		{"no owner yet", "", 0, false},
		{"no owner, old", "", 2 * time.Minute, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.owner != "" {
				if err := os.WriteFile(filepath.Join(home, ownerFile), []byte(tt.owner), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if tt.age > 0 {
				old := time.Now().Add(-tt.age)
				if err := os.Chtimes(home, old, old); err != nil {
					t.Fatal(err)
				}
			}
			if got := stale(home); got != tt.want {
				t.Errorf("got stale=%v, want %v", got, tt.want)
			}
		})
	}
}

func TestSweepStale(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	mk := func(name, owner string) string {
		home := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(home, "shared", "data"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(home, ownerFile), []byte(owner), 0o644); err != nil {
			t.Fatal(err)
		}
		return home
	}
	gone := mk(homePrefix+"gone", strconv.Itoa(dead.Process.Pid))
	live := mk(homePrefix+"live", strconv.Itoa(os.Getppid()))
	other := mk("something-else", strconv.Itoa(dead.Process.Pid))
	sweepStale()
	if _, err := os.Stat(gone); !os.IsNotExist(err) {
		t.Errorf("got %s kept (%v), want it removed", gone, err)
	}
	for _, keep := range []string{live, other} {
		if _, err := os.Stat(keep); err != nil {
			t.Errorf("got %s removed (%v), want it kept", keep, err)
		}
	}
}
