package sbflag

import (
	"strings"

	"github.com/spf13/pflag"
)

// optional is a string option that may stand alone or take a value (see
// OptionalVar).
type optional struct {
	p       *string
	isValue func(string) bool
}

func (o *optional) Set(s string) error { *o.p = s; return nil }

func (o *optional) String() string {
	if o == nil || o.p == nil {
		return ""
	}
	return *o.p
}

func (o *optional) Type() string { return "string" }

// OptionalVar defines a string option bound to p that may stand alone,
// meaning alone, or take a value: --name=VALUE, or --name VALUE as every
// other option takes one, when isValue says the next argument is meant
// for it. pflag leaves that next argument on the line after a bare
// --name; JoinOptional, which the command calls on its arguments before
// it parses them, gives it to the option. A next argument isValue does
// not claim stays where it is (watch --stall TARGET).
func OptionalVar(fs *pflag.FlagSet, p *string, name, alone, usage string, isValue func(string) bool) {
	fs.VarPF(&optional{p: p, isValue: isValue}, name, "", usage).NoOptDefVal = alone
}

// JoinOptional returns args with "--name VALUE" written "--name=VALUE"
// for each option of fs that OptionalVar defined whose isValue claims
// VALUE. The values of other options are passed over, so that one which
// looks like an option is not taken for one; "--" ends the options.
func JoinOptional(fs *pflag.FlagSet, args []string) []string {
	out := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		out = append(out, a)
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		f := bareFlag(fs, a)
		if f == nil || i+1 == len(args) {
			continue
		}
		switch o, ok := f.Value.(*optional); {
		case ok && o.isValue(args[i+1]):
			i++
			out[len(out)-1] = a + "=" + args[i]
		case !ok && f.NoOptDefVal == "":
			i++ // its value
			out = append(out, args[i])
		}
	}
	return out
}

// bareFlag is the option of fs that a names without a value after '='
// (--name, or -x alone), or nil.
func bareFlag(fs *pflag.FlagSet, a string) *pflag.Flag {
	switch {
	case strings.HasPrefix(a, "--") && !strings.Contains(a, "="):
		return fs.Lookup(a[2:])
	case len(a) == 2 && a[0] == '-' && a[1] != '-':
		return fs.ShorthandLookup(a[1:])
	}
	return nil
}
