// Package sbflag holds option values spelled the way sysbench and the MySQL
// clients spell them: on/off booleans, comma lists, and option names that
// accept '_' and '-' alike.
package sbflag

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// NewFlagSet returns a flag set that reports errors instead of exiting and
// treats '_' and '-' in option names as the same character.
func NewFlagSet(name string) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetNormalizeFunc(Normalize)
	fs.SortFlags = false
	fs.Usage = func() {}
	return fs
}

// Normalize maps an option name to its canonical spelling with '-'.
func Normalize(_ *pflag.FlagSet, name string) pflag.NormalizedName {
	return pflag.NormalizedName(strings.ReplaceAll(name, "_", "-"))
}

// Bool is a boolean option that accepts on/off, true/false, yes/no and 1/0,
// as sysbench does. A bare --name means on.
type Bool bool

// BoolVar defines a sysbench-style boolean option bound to p.
func BoolVar(fs *pflag.FlagSet, p *bool, name string, def bool, usage string) {
	*p = def
	f := fs.VarPF((*Bool)(p), name, "", usage)
	f.NoOptDefVal = "on"
}

// ParseBool parses a sysbench-style boolean.
func ParseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "on", "true", "yes", "1":
		return true, nil
	case "off", "false", "no", "0":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean: use on or off", s)
}

func (b *Bool) Set(s string) error {
	v, err := ParseBool(s)
	if err != nil {
		return err
	}
	*b = Bool(v)
	return nil
}

func (b *Bool) String() string {
	if b != nil && *b {
		return "on"
	}
	return "off"
}

func (b *Bool) Type() string { return "on|off" }

// Strings is a comma-separated list option; repeating the option appends.
type Strings []string

func (s *Strings) Set(v string) error {
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			*s = append(*s, part)
		}
	}
	return nil
}

func (s *Strings) String() string { return strings.Join(*s, ",") }
func (s *Strings) Type() string   { return "list" }

// Ints is a comma-separated list of integers.
type Ints []int

func (s *Ints) Set(v string) error { return s.add(v, "a whole number", nil) }

// add appends the numbers of the list v, each of which must pass ok
// (when given); a part that is no number or fails ok is said not to be
// want.
func (s *Ints) add(v, want string, ok func(int) bool) error {
	for _, part := range strings.Split(v, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		n, err := strconv.Atoi(part)
		if err != nil || (ok != nil && !ok(n)) {
			return fmt.Errorf("%q is not %s", part, want)
		}
		*s = append(*s, n)
	}
	return nil
}

func (s *Ints) String() string {
	parts := make([]string, len(*s))
	for i, n := range *s {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

func (s *Ints) Type() string { return "list" }

// Ports is a comma-separated list of TCP port numbers.
type Ports []int

func (p *Ports) Set(v string) error {
	return (*Ints)(p).add(v, "a port number (1-65535)", func(n int) bool { return n >= 1 && n <= 65535 })
}

func (p *Ports) String() string { return (*Ints)(p).String() }
func (p *Ports) Type() string   { return "list" }
