package target

import (
	"bytes"
	"crypto/aes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gopkg.in/ini.v1"

	"github.com/shakedown/shakedown/internal/usage"
)

// MySQL option files (my.cnf) are INI files with the mysql client's own
// rules for values, read here with an INI library for the structure and
// these rules on top: a '#' outside quotes starts a comment, a value may be
// quoted with ' or ", and \n \t \r \b \s \\ \' \" are escapes.

// optionFile is one file to read and whether it must exist.
type optionFile struct {
	path     string
	required bool // named by an option: a missing one is bad usage
	login    bool // ~/.mylogin.cnf: obfuscated
}

// optionFiles lists the files c reads, in the mysql client's order.
func (c *Credentials) optionFiles(getenv func(string) string) []optionFile {
	if c.NoDefaults {
		return nil
	}
	get := func(k string) string {
		if getenv == nil {
			return ""
		}
		return getenv(k)
	}
	home := get("HOME")
	var files []optionFile
	if c.DefaultsFile != "" {
		files = append(files, optionFile{path: c.DefaultsFile, required: true})
	} else {
		for _, f := range systemOptionFiles {
			files = append(files, optionFile{path: f})
		}
		if mh := get("MYSQL_HOME"); mh != "" {
			files = append(files, optionFile{path: filepath.Join(mh, "my.cnf")})
		}
		if c.DefaultsExtra != "" {
			files = append(files, optionFile{path: c.DefaultsExtra, required: true})
		}
		if home != "" {
			files = append(files, optionFile{path: filepath.Join(home, ".my.cnf")})
		}
	}
	if home != "" {
		files = append(files, optionFile{path: filepath.Join(home, ".mylogin.cnf"), login: true})
	}
	return files
}

// fromOptionFiles returns the last password the option files give for
// user in the groups c reads, and where it was found ("" when none). A
// group that names another user (user = root) keeps its password for that
// user: a ~/.my.cnf written for root must not turn every other login, a
// sandbox's passwordless one say, into "access denied". A group without a
// user line applies to any, as with the mysql client.
func (c *Credentials) fromOptionFiles(getenv func(string) string, user string) (pw, from string, err error) {
	groups := c.optionGroups()
	for _, f := range c.optionFiles(getenv) {
		opts, err := readOptionFile(f, 0)
		if err != nil {
			return "", "", err
		}
		owner := map[string]string{} // file and group -> the user it names
		for _, o := range opts {
			if o.key == "user" {
				owner[o.file+"\x00"+o.group] = o.value
			}
		}
		for _, o := range opts {
			if o.key != "password" || !slices.Contains(groups, o.group) {
				continue
			}
			if u := owner[o.file+"\x00"+o.group]; u != "" && u != user {
				continue
			}
			pw, from = o.value, fmt.Sprintf("%s [%s]", displayPath(o.file, getenv), o.group)
		}
	}
	return pw, from, nil
}

// displayPath writes the home directory as ~, as the user would.
func displayPath(p string, getenv func(string) string) string {
	if getenv != nil {
		if home := getenv("HOME"); home != "" && strings.HasPrefix(p, home+"/") {
			return "~" + p[len(home):]
		}
	}
	return p
}

// option is one key = value of an option file.
type option struct {
	file, group, key, value string
}

// maxIncludeDepth stops !include loops.
const maxIncludeDepth = 10

// readOptionFile reads one option file and the files it includes. A file
// that does not exist is skipped unless required; a world-writable one is
// skipped, as the mysql client skips it (anyone could have put a password
// there).
func readOptionFile(f optionFile, depth int) ([]option, error) {
	if depth > maxIncludeDepth {
		return nil, usage.Errorf("option file %s: includes nested more than %d deep", f.path, maxIncludeDepth)
	}
	st, err := os.Stat(f.path)
	switch {
	case err != nil && !f.required && errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, usage.Errorf("option file: %s", pathError(err))
	case st.IsDir():
		return nil, usage.Errorf("option file %s is a directory", f.path)
	case st.Mode().Perm()&0o002 != 0:
		return nil, nil
	}
	data, err := os.ReadFile(f.path)
	if err != nil {
		if !f.required {
			return nil, nil // unreadable: not ours to read, as with the mysql client
		}
		return nil, usage.Errorf("option file: %s", pathError(err))
	}
	if f.login {
		if data, err = decodeLoginFile(data); err != nil {
			return nil, usage.Errorf("option file %s: %v", f.path, err)
		}
	}
	text, includes := splitIncludes(data, filepath.Dir(f.path))
	out, err := parseOptions(f.path, text)
	if err != nil {
		return nil, err
	}
	// Included files come after the file's own options: their values win
	// where both set one, as they do when the include line is last, which
	// is where distributions put it.
	for _, inc := range includes {
		opts, err := readOptionFile(optionFile{path: inc}, depth+1)
		if err != nil {
			return nil, err
		}
		out = append(out, opts...)
	}
	return out, nil
}

// parseOptions reads the [group] key=value lines of an option file's text,
// with the mysql client's rules for values.
func parseOptions(path string, text []byte) ([]option, error) {
	cfg, err := ini.LoadSources(ini.LoadOptions{
		Insensitive:             true,
		AllowBooleanKeys:        true,
		IgnoreInlineComment:     true,
		IgnoreContinuation:      true,
		PreserveSurroundedQuote: true,
		SkipUnrecognizableLines: true,
		KeyValueDelimiters:      "=",
	}, text)
	if err != nil {
		return nil, usage.Errorf("option file %s: %v", path, err)
	}
	var out []option
	for _, sec := range cfg.Sections() {
		if sec.Name() == ini.DefaultSection {
			continue // options before any [group]: the mysql client refuses them
		}
		for _, k := range sec.Keys() {
			out = append(out, option{file: path, group: sec.Name(), key: strings.ReplaceAll(k.Name(), "_", "-"), value: optionValue(k.Value())})
		}
	}
	return out, nil
}

// splitIncludes takes the !include and !includedir lines out of an option
// file (keeping the line count) and lists the files they name. A bare
// "password" line, which asks the mysql client to prompt, is taken out too:
// shakedown does not prompt, and an INI boolean would read it as "true".
func splitIncludes(data []byte, dir string) ([]byte, []string) {
	lines := bytes.Split(data, []byte("\n"))
	var includes []string
	for i, l := range lines {
		s := strings.TrimSpace(string(l))
		switch {
		case strings.HasPrefix(s, "!includedir"):
			d := strings.TrimSpace(strings.TrimPrefix(s, "!includedir"))
			if !filepath.IsAbs(d) {
				d = filepath.Join(dir, d)
			}
			matches, _ := filepath.Glob(filepath.Join(d, "*.cnf"))
			sort.Strings(matches)
			includes = append(includes, matches...)
			lines[i] = nil
		case strings.HasPrefix(s, "!include"):
			p := strings.TrimSpace(strings.TrimPrefix(s, "!include"))
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			includes = append(includes, p)
			lines[i] = nil
		case strings.EqualFold(s, "password"):
			lines[i] = nil
		}
	}
	return bytes.Join(lines, []byte("\n")), includes
}

// optionValue applies the mysql client's rules to a raw value: a comment
// from a '#' outside quotes, surrounding quotes, and escapes.
func optionValue(raw string) string {
	var quote byte
	escape := false
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if (c == '\'' || c == '"') && !escape {
			switch quote {
			case 0:
				quote = c
			case c:
				quote = 0
			}
		}
		if quote == 0 && c == '#' {
			raw = raw[:i]
			break
		}
		escape = quote != 0 && c == '\\' && !escape
	}
	v := strings.TrimSpace(raw)
	if len(v) >= 2 && (v[0] == '\'' || v[0] == '"') && v[len(v)-1] == v[0] {
		v = v[1 : len(v)-1]
	}
	var b strings.Builder
	for i := 0; i < len(v); i++ {
		if v[i] != '\\' || i+1 == len(v) {
			b.WriteByte(v[i])
			continue
		}
		i++
		switch v[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'b':
			b.WriteByte('\b')
		case 's':
			b.WriteByte(' ')
		case '\\', '\'', '"':
			b.WriteByte(v[i])
		default:
			b.WriteByte('\\')
			b.WriteByte(v[i])
		}
	}
	return b.String()
}

// decodeLoginFile reads ~/.mylogin.cnf, which mysql_config_editor writes
// obfuscated: 4 unused bytes, a 20-byte key, then lines each as a 4-byte
// little-endian length and the line encrypted with AES-128-ECB (PKCS#7
// padding) under the key folded to 16 bytes.
func decodeLoginFile(data []byte) ([]byte, error) {
	const keyAt, keyLen = 4, 20
	if len(data) < keyAt+keyLen {
		return nil, errors.New("too short for a login path file")
	}
	var key [16]byte
	for i, b := range data[keyAt : keyAt+keyLen] {
		key[i%16] ^= b
	}
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	rest := data[keyAt+keyLen:]
	for len(rest) > 0 {
		if len(rest) < 4 {
			return nil, errors.New("truncated")
		}
		n := int(binary.LittleEndian.Uint32(rest))
		rest = rest[4:]
		if n <= 0 || n > len(rest) || n%aes.BlockSize != 0 {
			return nil, errors.New("damaged: a line's length does not fit")
		}
		line := make([]byte, n)
		for i := 0; i < n; i += aes.BlockSize {
			block.Decrypt(line[i:i+aes.BlockSize], rest[i:i+aes.BlockSize])
		}
		pad := int(line[n-1])
		if pad < 1 || pad > aes.BlockSize {
			return nil, errors.New("damaged: bad padding")
		}
		out.Write(line[:n-pad])
		rest = rest[n:]
	}
	return out.Bytes(), nil
}
