package sandbox

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/usage"
)

// setting is one server variable. key is canonical: lower case, '_' for '-'.
type setting struct {
	key, value string
}

func (s setting) String() string { return s.key + "=" + s.value }

// defaultSettings fit benchmarking with thousands of client threads on one
// box. Options.Set overrides them by key. log_bin is handled by serverArgs:
// OFF becomes --skip-log-bin, anything else turns the binary log on.
var defaultSettings = []setting{
	{"max_connections", "5000"},
	{"max_prepared_stmt_count", "1048576"},
	{"innodb_buffer_pool_size", "1G"},
	{"innodb_log_file_size", "256M"},
	{"table_open_cache", "4000"},
	{"open_files_limit", "65535"},
	{"thread_cache_size", "256"},
	{"back_log", "2000"},
	{"max_allowed_packet", "64M"},
	{"local_infile", "1"},
	{"log_bin", "OFF"},
}

// initSettings must already hold when the data directory is created, so
// they are passed to mariadb-install-db / mysqld --initialize-insecure too.
var initSettings = map[string]bool{
	"innodb_page_size":        true,
	"innodb_log_file_size":    true,
	"innodb_data_file_path":   true,
	"innodb_undo_tablespaces": true,
	"lower_case_table_names":  true,
}

// reserved are options the sandbox sets itself; the value says what to do
// instead of --set.
var reserved = map[string]string{
	"port":                  "use --port",
	"basedir":               "use --basedir",
	"datadir":               "the sandbox keeps its data in its own directory",
	"socket":                "the sandbox puts its socket in its own directory",
	"pid_file":              "the sandbox keeps its pid file in its own directory",
	"log_error":             "the sandbox keeps its error log in its own directory",
	"init_file":             "the sandbox uses --init-file to create its user and database",
	"bind_address":          "sandboxes listen on 127.0.0.1 only",
	"skip_networking":       "sandboxes are reached over TCP on 127.0.0.1",
	"user":                  "the sandbox runs as the current user",
	"no_defaults":           "sandboxes never read option files",
	"defaults_file":         "sandboxes never read option files",
	"defaults_extra_file":   "sandboxes never read option files",
	"defaults_group_suffix": "sandboxes never read option files",
	"skip_log_bin":          "use --set log_bin=OFF",
	"disable_log_bin":       "use --set log_bin=OFF",
}

var keyRE = regexp.MustCompile(`^[a-z][a-z0-9_.]*$`)

// ValidateSet checks "var=value" server settings as given to --set: the
// variable name may use '_' or '-', and options the sandbox manages itself
// (port, datadir, socket, ...) are refused with what to do instead. The
// error wraps ErrInvalid.
func ValidateSet(set []string) error {
	_, err := parseSet(set)
	return err
}

func parseSet(set []string) ([]setting, error) {
	out := make([]setting, 0, len(set))
	for _, s := range set {
		k, v, ok := strings.Cut(s, "=")
		key := strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(strings.TrimSpace(k), "--"), "-", "_"))
		if !ok || key == "" {
			return nil, outcomef(ErrInvalid, "--set %q: want var=value, e.g. --set innodb_buffer_pool_size=2G", s)
		}
		if !keyRE.MatchString(key) {
			return nil, outcomef(ErrInvalid, "--set %q: %q is not a server variable name (letters, digits, '_' or '-')", s, k)
		}
		if why, bad := reserved[key]; bad {
			return nil, outcomef(ErrInvalid, "--set %s: %s", key, why)
		}
		if key == "log_bin" {
			if _, err := binlogMode(v); err != nil {
				return nil, outcomef(ErrInvalid, "--set %s: %v", s, err)
			}
		}
		out = append(out, setting{key: key, value: v})
	}
	return out, nil
}

// mergeSettings returns defaults overridden by user, in the defaults' order
// followed by the user's new keys in the order given. A key given twice
// keeps the last value.
func mergeSettings(defaults, user []setting) []setting {
	out := append([]setting(nil), defaults...)
	index := make(map[string]int, len(out))
	for i, s := range out {
		index[s.key] = i
	}
	for _, s := range user {
		if i, ok := index[s.key]; ok {
			out[i].value = s.value
			continue
		}
		index[s.key] = len(out)
		out = append(out, s)
	}
	return out
}

// binlogMode reads a log_bin value: "" (off), "on" (default basename) or a
// basename of the user's choosing.
func binlogMode(v string) (string, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "off", "0", "false", "no":
		return "", nil
	case "on", "1", "true", "yes", "":
		return "on", nil
	}
	if strings.ContainsAny(v, " \t\n") {
		return "", fmt.Errorf("want ON, OFF or a binary log basename without spaces")
	}
	return v, nil
}

// serverArgs turns settings into mysqld options. log_bin needs care: the
// server's --log-bin takes a basename, not ON/OFF, and a binary log needs a
// server_id, so ON becomes --log-bin=DATADIR/binlog plus --server-id=1
// unless server_id is set.
func serverArgs(settings []setting, dataDir string) []string {
	args := make([]string, 0, len(settings)+1)
	hasServerID := false
	for _, s := range settings {
		if s.key == "server_id" {
			hasServerID = true
		}
	}
	for _, s := range settings {
		if s.key != "log_bin" {
			args = append(args, "--"+strings.ReplaceAll(s.key, "_", "-")+"="+s.value)
			continue
		}
		mode, _ := binlogMode(s.value) // validated by parseSet
		switch mode {
		case "":
			args = append(args, "--skip-log-bin")
			continue
		case "on":
			args = append(args, "--log-bin="+filepath.Join(dataDir, "binlog"))
		default:
			args = append(args, "--log-bin="+mode)
		}
		if !hasServerID {
			args = append(args, "--server-id=1")
		}
	}
	return args
}

// installArgs are the settings that must hold from the data directory's
// creation on.
func installArgs(settings []setting) []string {
	var init []setting
	for _, s := range settings {
		if initSettings[s.key] {
			init = append(init, s)
		}
	}
	return serverArgs(init, "")
}

func settingStrings(settings []setting) []string {
	out := make([]string, len(settings))
	for i, s := range settings {
		out[i] = s.String()
	}
	return out
}

// Differences lists how a "sandbox up" with port (0: any), set ("var=value"
// as --set takes them) and basedir ("": any) would differ from sandbox i as
// it is, each as the option and what i has instead; none means i is what
// was asked for. A setting i was not given counts as differing, since the
// server's own default may not be the value asked for.
func (i *Instance) Differences(port int, set []string, basedir string) ([]string, error) {
	asked, err := parseSet(set)
	if err != nil {
		return nil, err
	}
	have, _ := parseSet(i.Settings)
	has := map[string]string{}
	for _, s := range have {
		has[s.key] = s.value
	}
	var out []string
	if port != 0 && port != i.ClientPort() {
		out = append(out, fmt.Sprintf("--port %d (it runs on 127.0.0.1:%d)", port, i.ClientPort()))
	}
	for _, s := range mergeSettings(nil, asked) {
		v, ok := has[s.key]
		switch {
		case !ok:
			out = append(out, fmt.Sprintf("--set %s=%s (it has the server's default)", s.key, s.value))
		case !sameValue(s.key, v, s.value):
			out = append(out, fmt.Sprintf("--set %s=%s (it has %s=%s)", s.key, s.value, s.key, v))
		}
	}
	if basedir != "" && filepath.Clean(basedir) != filepath.Clean(i.Basedir) {
		was := i.Basedir
		if was == "" {
			was = "the system's server"
		}
		out = append(out, fmt.Sprintf("--basedir %s (it runs %s)", basedir, was))
	}
	return out, nil
}

// sameValue compares two values of a server variable as the server would
// read them: ON and on, 1G and 1g are one value.
func sameValue(key, a, b string) bool {
	if key == "log_bin" {
		ma, errA := binlogMode(a)
		mb, errB := binlogMode(b)
		return errA == nil && errB == nil && ma == mb
	}
	return strings.EqualFold(strings.TrimSpace(a), strings.TrimSpace(b))
}

// kindOf is the kind of sandbox that runs flavour f: mariadb for a
// MariaDB or MySQL server ("" included), else the flavour.
func kindOf(f flavour.Name) flavour.Name {
	if f == "" || f == flavour.MySQL {
		return flavour.MariaDB
	}
	return f
}

// CheckReuse says, as bad usage, why "sandbox up" cannot use sandbox i as
// it is: it differs from what port, set, basedir, place and the flavour f
// ask for. Its data stays either way; nil when i is what was asked for.
func (i *Instance) CheckReuse(port int, set []string, basedir string, place Placement, f flavour.Name, shards int) error {
	diffs, err := i.Differences(port, set, basedir)
	if err != nil {
		return usage.Errorf("sandbox up: %v", err)
	}
	if kindOf(flavour.Name(i.Flavour)) != kindOf(f) {
		diffs = append(diffs, fmt.Sprintf("--flavour %s (it runs %s)", f, i.Product()))
	} else if shards != 0 && i.Shards != 0 && shards != i.Shards {
		diffs = append(diffs, fmt.Sprintf("--shards %d (its keyspace has %d)", shards, i.Shards))
	}
	diffs = append(diffs, i.PlacementDifferences(place)...)
	if len(diffs) == 0 {
		return nil
	}
	state := "runs"
	if !i.Running {
		state = "exists (stopped)"
	}
	return usage.Errorf("sandbox up: sandbox %s %s with other settings than asked: %s. Its data stays: use it as it is (shakedown sandbox up %s, without those options), or make another with these settings under a new name; only sandbox down %s, which deletes its data, frees the name",
		i.Name, state, strings.Join(diffs, ", "), i.Name, i.Name)
}
