package sbflag

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/suggest"
)

// Explain turns an error from fs.Parse into one line that names the option,
// says what is wrong with it, and suggests the option meant when the name is
// a typo: `--thread: unknown option (did you mean --threads?)`,
// `--time: "abc" is not a whole number`. Errors it does not know come back
// as pflag wrote them. help is the command that lists the options
// ("shakedown watch --help"), named when an unknown option resembles none.
func Explain(fs *pflag.FlagSet, err error, help string) string {
	var (
		notExist *pflag.NotExistError
		required *pflag.ValueRequiredError
		invalid  *pflag.InvalidValueError
		syntax   *pflag.InvalidSyntaxError
	)
	switch {
	case errors.As(err, &notExist):
		if notExist.GetSpecifiedShortnames() == "" {
			return unknown(fs, notExist.GetSpecifiedName(), help)
		}
		group, _, _ := strings.Cut(notExist.GetSpecifiedShortnames(), "=")
		if len(group) > 1 {
			// -threads=4: a long option with one dash.
			return "-" + group + ": unknown option; long options take two dashes" + strings.TrimPrefix(unknown(fs, group, help), "--"+string(Normalize(fs, group))+": unknown option")
		}
		return fmt.Sprintf("-%s: unknown option", notExist.GetSpecifiedName()) + writesWith(fs, notExist.GetSpecifiedName())
	case errors.As(err, &required):
		return fmt.Sprintf("--%s: needs a value (--%s=VALUE)", required.GetFlag().Name, required.GetFlag().Name)
	case errors.As(err, &invalid):
		f := invalid.GetFlag()
		return fmt.Sprintf("--%s: %s", f.Name, badValue(f, invalid.GetValue(), errors.Unwrap(err)))
	case errors.As(err, &syntax):
		return fmt.Sprintf("%s: not an option: options are written --name=value or --name value", syntax.GetSpecifiedFlag())
	}
	return err.Error()
}

// unknown is the message for an option fs does not have.
func unknown(fs *pflag.FlagSet, name, help string) string {
	name = string(Normalize(fs, name))
	var known []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			known = append(known, f.Name)
		}
	})
	msg := "--" + name + ": unknown option"
	if w := writesWith(fs, name); w != "" {
		return msg + w
	}
	if s := suggest.Closest(name, known); s != "" {
		return msg + " (did you mean --" + s + "?)"
	}
	if help != "" {
		return msg + "; " + help + " lists them"
	}
	return msg
}

// writesWith points one who asked for -o FILE or --format, as some
// commands write their files, at the options fs writes them with
// instead (--json FILE, --html FILE); "" when name is neither or fs has
// none of them.
func writesWith(fs *pflag.FlagSet, name string) string {
	if name != "o" && name != "output" && name != "format" {
		return ""
	}
	var with []string
	for _, f := range []string{"json", "html"} {
		if fs.Lookup(f) != nil {
			with = append(with, "--"+f+" FILE")
		}
	}
	if len(with) == 0 {
		return ""
	}
	return " (files are written with " + strings.Join(with, " or ") + ")"
}

// badValue says why value does not fit flag f, in words rather than in
// strconv's.
func badValue(f *pflag.Flag, value string, cause error) string {
	q := strconv.Quote(value)
	switch f.Value.Type() {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		if errors.Is(cause, strconv.ErrRange) {
			return q + " is out of range"
		}
		return q + " is not a whole number"
	case "float32", "float64":
		return q + " is not a number"
	case "duration":
		if _, err := strconv.ParseFloat(value, 64); err == nil {
			return q + " needs a unit: " + value + "s, " + value + "ms, " + value + "m"
		}
		return q + " is not a duration such as 10s, 500ms or 2m"
	case "bool":
		return q + " is not true or false"
	}
	if cause == nil {
		return q + " is not valid"
	}
	// Our own option types (on|off, lists, ports) already say what is
	// wrong and with which value.
	msg := cause.Error()
	if strings.Contains(msg, `"`) {
		return msg
	}
	return q + ": " + msg
}
