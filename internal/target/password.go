package target

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/usage"
)

// Credentials say where a target's password comes from when its URL holds
// none. Every command that connects binds them, so that each finds a
// password the way the mysql client does, in this order (the first source
// that has one wins):
//
//  1. the URL (or sysbench's --mysql-password);
//  2. --password-file: the first line of a file;
//  3. the environment: MYSQL_PWD, or the variable EnvVar names (a plan's
//     password_env);
//  4. the MySQL option files: --defaults-file alone, else the system files,
//     $MYSQL_HOME/my.cnf, --defaults-extra-file, ~/.my.cnf and
//     ~/.mylogin.cnf, in that order; in each the groups [client],
//     [shakedown] and the --login-path group; the last password read wins,
//     as with the mysql client, except that a group naming another user
//     (user = root) keeps its password for that user. --no-defaults reads
//     none.
type Credentials struct {
	File          string // --password-file
	EnvVar        string // "" means MYSQL_PWD
	DefaultsFile  string // --defaults-file: the only option file read
	DefaultsExtra string // --defaults-extra-file: read before ~/.my.cnf
	LoginPath     string // --login-path: a group read after [client]
	NoDefaults    bool   // --no-defaults: read no option file
}

// Bind adds the password options to fs, bound to c.
func (c *Credentials) Bind(fs *pflag.FlagSet) {
	fs.StringVar(&c.File, "password-file", "", "read the password from the first line of FILE (when the URL holds none)")
	fs.StringVar(&c.DefaultsFile, "defaults-file", "", "read the password from this MySQL option file only ([client] group)")
	fs.StringVar(&c.DefaultsExtra, "defaults-extra-file", "", "read this MySQL option file too, before ~/.my.cnf")
	fs.StringVar(&c.LoginPath, "login-path", "", "read this group of the option files (and ~/.mylogin.cnf) after [client]")
	sbflag.BoolVar(fs, &c.NoDefaults, "no-defaults", false, "read no MySQL option file")
}

// optionGroups are the option-file groups shakedown reads, in order.
func (c *Credentials) optionGroups() []string {
	g := []string{"client", "shakedown"}
	if c.LoginPath != "" {
		g = append(g, strings.ToLower(c.LoginPath))
	}
	return g
}

// systemOptionFiles are read first, as the mysql client reads them.
var systemOptionFiles = []string{"/etc/my.cnf", "/etc/mysql/my.cnf"}

// Fill gives t a password from the first source that has one, unless it
// has one already, and records where it came from in t.PasswordFrom.
// getenv reads the environment (MYSQL_PWD, HOME, MYSQL_HOME). A file named
// by an option that cannot be read is bad usage; a missing ~/.my.cnf is
// not. No password is not an error: the server decides.
func (c *Credentials) Fill(t *Target, getenv func(string) string) error {
	if t.Password != "" {
		if t.PasswordFrom == "" {
			t.PasswordFrom = "the URL"
		}
		return nil
	}
	if t.PasswordEnv != "" {
		// The URL names this target's own variable: it is the only source.
		pw := ""
		if getenv != nil {
			pw = getenv(t.PasswordEnv)
		}
		if pw == "" {
			return usage.Errorf("%s: password_env: environment variable %s is not set", t.Redacted(), t.PasswordEnv)
		}
		t.Password, t.PasswordFrom = pw, t.PasswordEnv
		return nil
	}
	if c.File != "" {
		pw, err := readPasswordFile(c.File)
		if err != nil {
			return err
		}
		t.Password, t.PasswordFrom = pw, "--password-file "+c.File
		return nil
	}
	env := c.EnvVar
	if env == "" {
		env = "MYSQL_PWD"
	}
	if getenv != nil {
		if pw := getenv(env); pw != "" {
			t.Password, t.PasswordFrom = pw, env
			return nil
		}
	}
	pw, from, err := c.fromOptionFiles(getenv, t.User)
	if err != nil {
		return err
	}
	if from != "" {
		t.Password, t.PasswordFrom = pw, from
	}
	return nil
}

// readPasswordFile is --password-file: the first line, without its line
// end. The file should be readable by its owner only; that is the user's
// to set, as for ~/.my.cnf.
func readPasswordFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", usage.Errorf("--password-file: %v", pathError(err))
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		if errors.Is(err, io.EOF) {
			return "", usage.Errorf("--password-file %s is empty: put the password on its first line", path)
		}
		return "", usage.Errorf("--password-file: read %s: %v", path, err)
	}
	pw := strings.TrimRight(line, "\r\n")
	if pw == "" {
		return "", usage.Errorf("--password-file %s: its first line is empty: put the password there", path)
	}
	return pw, nil
}

// pathError is an *fs.PathError in words: "open /x: no such file or
// directory".
func pathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s %s: %v", pe.Op, pe.Path, pe.Err)
	}
	return err.Error()
}
