package mirror

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/usage"
)

// ParseTargets reads --control URL and the --candidate NAME=URL values,
// with the credential options creds holds.
func ParseTargets(creds *target.Credentials, getenv func(string) string, control string, candidates []string) (*target.Target, []Candidate, error) {
	if control == "" {
		return nil, nil, usage.Errorf("mirror: --control URL is required")
	}
	if len(candidates) == 0 {
		return nil, nil, usage.Errorf("mirror: --candidate NAME=URL is required (repeat it for more candidates)")
	}
	ctl, err := creds.ParseArg(getenv, "mirror: --control", control)
	if err != nil {
		return nil, nil, err
	}
	ctl.Name = "control"
	var out []Candidate
	seen := map[string]bool{"control": true}
	for _, raw := range candidates {
		name, u, ok := strings.Cut(raw, "=")
		if !ok || strings.Contains(name, "://") || name == "" {
			return nil, nil, usage.Errorf("mirror: --candidate %s: want NAME=URL, e.g. --candidate new=mysql://user@host:3306/db", target.RedactArg(raw))
		}
		if seen[name] {
			return nil, nil, usage.Errorf("mirror: two targets are named %q: give each --candidate a name of its own", name)
		}
		seen[name] = true
		t, err := creds.ParseArg(getenv, "mirror: --candidate "+name, u)
		if err != nil {
			return nil, nil, err
		}
		t.Name = name
		out = append(out, Candidate{Name: name, Target: t})
	}
	return ctl, out, nil
}

// ReadAccounts reads an --accounts file: one user:password a line (the
// password is everything after the first colon, and may be empty); blank
// lines and lines starting with # are skipped. Every bad line is named
// at once, as FILE:LINE.
func ReadAccounts(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, usage.Errorf("mirror: --accounts: %v", err)
	}
	out := map[string]string{}
	var errs []error
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		user, pw, ok := strings.Cut(line, ":")
		switch {
		case !ok || user == "":
			errs = append(errs, fmt.Errorf("%s:%d: want user:password", path, n))
		case hasKey(out, user):
			errs = append(errs, fmt.Errorf("%s:%d: user %q is listed twice", path, n, user))
		default:
			out[user] = pw
		}
	}
	if len(errs) > 0 {
		return nil, usage.Errorf("mirror: --accounts: %v", errors.Join(errs...))
	}
	if len(out) == 0 {
		return nil, usage.Errorf("mirror: --accounts %s lists no account: want one user:password a line", path)
	}
	return out, nil
}

func hasKey(m map[string]string, k string) bool { _, ok := m[k]; return ok }
