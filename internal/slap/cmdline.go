package slap

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/shakedown/shakedown/internal/usage"
)

// Command is a stored level's command line, from its options: never the
// password, which is not among them.
func Command(opts map[string]string) string {
	keys := make([]string, 0, len(opts))
	for k := range opts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := []string{"slap"}
	for _, k := range keys {
		parts = append(parts, "--"+k+"="+opts[k])
	}
	return strings.Join(parts, " ")
}

// ReadPassword takes the password of a bare -p from standard input, one
// line, when that is not a terminal: there is no way to ask without echoing
// it, and scripts have no terminal.
func ReadPassword(in io.Reader) (string, error) {
	refuse := usage.Errorf("-p without a password asks for one, but shakedown does not read passwords from a terminal: give it attached (-pSECRET), as --password=SECRET, in MYSQL_PWD, or pipe it on standard input")
	if f, ok := in.(*os.File); ok {
		if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice != 0 {
			return "", refuse
		}
	}
	if in == nil {
		return "", refuse
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from standard input: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" && errors.Is(err, io.EOF) {
		return "", refuse
	}
	return line, nil
}
