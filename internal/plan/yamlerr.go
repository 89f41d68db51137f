package plan

import (
	"bytes"
	"errors"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// maxBisectLines bounds the search for the line of a syntax error: a plan
// is a page or two, and each try parses a prefix of it.
const maxBisectLines = 5000

// yamlError turns a YAML syntax error into the line it is on and a message
// that says what to do.
//
// yaml.v3 reports the line where the enclosing construct began, not the
// line of the mistake (and, for parser errors, that line counted from 0):
// an item indented one space too far on line 6 is reported on line 2, where
// its list began. The mistake's line is found instead as the first prefix of
// the file that fails with the same message and the same reported line: the
// parser cannot fail before it has read the line that is wrong.
func yamlError(src []byte, err error) (int, string) {
	var te *yaml.TypeError
	msg := err.Error()
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	m := yamlLineRE.FindStringSubmatch(msg)
	if m == nil {
		return 0, "not valid YAML: " + strings.TrimPrefix(msg, "yaml: ")
	}
	reported, _ := strconv.Atoi(m[1])
	line := reported
	if l := failingLine(src, msg); l > 0 {
		line = l
	}
	return line, "not valid YAML: " + m[2] + yamlHint(m[2])
}

// failingLine is the number of the first line whose prefix of src fails to
// parse with message msg, or 0.
func failingLine(src []byte, msg string) int {
	lines := bytes.SplitAfter(src, []byte("\n"))
	if len(lines) > maxBisectLines {
		return 0
	}
	n := 0
	for k := 1; k <= len(lines); k++ {
		n += len(lines[k-1])
		var doc yaml.Node
		err := yaml.Unmarshal(src[:n], &doc)
		if err != nil && err.Error() == msg {
			return k
		}
	}
	return 0
}

// yamlHint says in plain words what the common syntax errors mean.
func yamlHint(msg string) string {
	switch {
	case strings.Contains(msg, "found a tab character"):
		return ": indent with spaces, not tabs"
	case strings.Contains(msg, "did not find expected '-' indicator"),
		strings.Contains(msg, "did not find expected key"):
		return ": this line is not indented like the lines of the list or mapping it belongs to"
	case strings.Contains(msg, "did not find expected ',' or ']'"):
		return ": the [ list that starts on this line is not closed with ]"
	case strings.Contains(msg, "did not find expected ',' or '}'"):
		return ": the { mapping that starts on this line is not closed with }"
	case strings.Contains(msg, "mapping values are not allowed in this context"):
		return ": check this line's indentation, or quote a value that holds ': '"
	}
	return ""
}
