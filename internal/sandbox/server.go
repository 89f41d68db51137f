package sandbox

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"
)

// Server is a server binary found on this machine or in an unpacked
// tarball, and how to create a data directory for it.
type Server struct {
	Path      string // mariadbd or mysqld
	InstallDB string // mariadb-install-db; empty for MySQL, which uses mysqld --initialize-insecure
	Basedir   string // as given in Options.Basedir; empty for a system install
	Flavour   string // "mariadb" or "mysql"
	Version   string // from --version, e.g. "10.11.19"
}

// systemDirs are searched after PATH: Debian puts mariadbd in /usr/sbin,
// which is not on every user's PATH.
var systemDirs = []string{"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"}

// FindServer locates the server binary in basedir (bin/mariadbd or
// bin/mysqld), or when basedir is empty on PATH and in /usr/sbin, /usr/bin.
// It returns an error wrapping ErrNoServer when there is none.
func FindServer(ctx context.Context, basedir string) (*Server, error) {
	s := &Server{Basedir: basedir}
	if basedir != "" {
		abs, err := filepath.Abs(basedir)
		if err != nil {
			return nil, fmt.Errorf("find server: %w", err)
		}
		s.Basedir = abs
		s.Path = firstExecutable(
			filepath.Join(abs, "bin", "mariadbd"), filepath.Join(abs, "sbin", "mariadbd"),
			filepath.Join(abs, "bin", "mysqld"), filepath.Join(abs, "sbin", "mysqld"))
		if s.Path == "" {
			return nil, outcomef(ErrNoServer, "no bin/mariadbd or bin/mysqld in --basedir %s", basedir)
		}
		s.InstallDB = firstExecutable(
			filepath.Join(abs, "scripts", "mariadb-install-db"), filepath.Join(abs, "bin", "mariadb-install-db"),
			filepath.Join(abs, "scripts", "mysql_install_db"), filepath.Join(abs, "bin", "mysql_install_db"))
	} else {
		s.Path = lookPath("mariadbd", "mysqld")
		if s.Path == "" {
			return nil, outcomef(ErrNoServer, "no mariadbd or mysqld on PATH or in /usr/sbin; install mariadb-server (make deps) or pass --basedir")
		}
		s.InstallDB = lookPath("mariadb-install-db", "mysql_install_db")
	}

	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, s.Path, "--no-defaults", "--version").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("run %s --version: %w: %s", s.Path, err, bytes.TrimSpace(out))
	}
	s.Flavour, s.Version = parseVersion(versionFromBanner(string(out)))
	if s.Flavour == "mysql" {
		s.InstallDB = "" // mysql_install_db is obsolete since 5.7
	} else if s.InstallDB == "" {
		return nil, outcomef(ErrNoServer, "found %s but no mariadb-install-db next to it; install mariadb-server (make deps)", s.Path)
	}
	return s, nil
}

func firstExecutable(paths ...string) string {
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return ""
}

// lookPath returns the first of names found on PATH or in systemDirs.
func lookPath(names ...string) string {
	for _, n := range names {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
		for _, d := range systemDirs {
			if p := firstExecutable(filepath.Join(d, n)); p != "" {
				return p
			}
		}
	}
	return ""
}

var bannerRE = regexp.MustCompile(`Ver\s+(\S+)`)

// versionFromBanner takes "mysqld  Ver 8.0.36 for Linux ... (MySQL Community
// Server - GPL)" or "mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for ..." and
// returns what VERSION() would say.
func versionFromBanner(banner string) string {
	m := bannerRE.FindStringSubmatch(banner)
	if m == nil {
		return banner
	}
	v := m[1]
	if strings.Contains(banner, "MariaDB") && !strings.Contains(v, "MariaDB") {
		v += "-MariaDB"
	}
	return v
}

// parseVersion splits a VERSION() string into flavour and plain version:
// "10.11.19-MariaDB-0+deb12u1" is mariadb 10.11.19, "8.0.36" is mysql 8.0.36.
func parseVersion(v string) (flavour, version string) {
	v = strings.TrimSpace(v)
	if _, rel, ok := strings.Cut(v, "-TiDB-v"); ok {
		version, _, _ = strings.Cut(rel, "-")
		return "tidb", version
	}
	flavour = "mysql"
	if strings.Contains(strings.ToLower(v), "mariadb") {
		flavour = "mariadb"
		// Old replication clients see "5.5.5-10.x"; strip the prefix.
		v = strings.TrimPrefix(v, "5.5.5-")
	}
	version, _, _ = strings.Cut(v, "-")
	return flavour, version
}

// install creates dataDir, writing the tool's output to logPath.
func (s *Server) install(ctx context.Context, dataDir, logPath string, root bool, extra []string) error {
	var name string
	var args []string
	if s.InstallDB != "" {
		name = s.InstallDB
		args = []string{"--no-defaults", "--datadir=" + dataDir,
			"--auth-root-authentication-method=normal", "--skip-test-db"}
	} else {
		name = s.Path
		args = []string{"--no-defaults", "--initialize-insecure", "--datadir=" + dataDir}
	}
	if s.Basedir != "" {
		args = append(args, "--basedir="+s.Basedir)
	}
	if root {
		args = append(args, "--user=root")
	}
	args = append(args, extra...)

	log, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("initialise data directory: %w", err)
	}
	defer log.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout = log
	cmd.Stderr = log
	// mariadb-install-db runs mariadbd --bootstrap as a child: on
	// cancellation kill its whole process group, not just the script.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if s.Basedir != "" {
		cmd.Dir = s.Basedir
	}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		// The data directory is part of a sandbox being created: on failure
		// it is removed with the log.
		return startError("initialise data directory with "+filepath.Base(name), err, false, logPath)
	}
	return nil
}

// label is how the flavour is written for people.
func label(flavour string) string {
	switch flavour {
	case "mariadb":
		return "MariaDB"
	case "mysql":
		return "MySQL"
	case "tidb":
		return "TiDB"
	case "galera":
		return "MariaDB Galera"
	case "vitess":
		return "Vitess"
	}
	return flavour
}
