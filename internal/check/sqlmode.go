package check

import (
	"maps"
	"slices"
	"strings"
)

// sqlModeEffects say what each mode changes when it is on.
var sqlModeEffects = map[string]string{
	"STRICT_TRANS_TABLES":        "invalid or out-of-range values are refused for transactional tables instead of being adjusted with a warning",
	"STRICT_ALL_TABLES":          "invalid or out-of-range values are refused for every table, even halfway through a multi-row statement",
	"NO_ZERO_DATE":               "'0000-00-00' is refused (in strict mode) or stored with a warning",
	"NO_ZERO_IN_DATE":            "dates with a zero month or day ('2024-00-10') are refused (in strict mode) or stored as zero",
	"ONLY_FULL_GROUP_BY":         "queries that select columns not in GROUP BY and not aggregated are refused",
	"ERROR_FOR_DIVISION_BY_ZERO": "division by zero is an error in strict mode instead of NULL",
	"NO_ENGINE_SUBSTITUTION":     "CREATE TABLE with an unavailable engine fails instead of using the default engine",
	"NO_AUTO_CREATE_USER":        "GRANT does not create missing accounts",
	"ANSI_QUOTES":                "double quotes quote identifiers, not strings",
	"PIPES_AS_CONCAT":            "|| concatenates strings instead of meaning OR",
	"NO_BACKSLASH_ESCAPES":       "backslash is an ordinary character in string literals",
	"NO_AUTO_VALUE_ON_ZERO":      "inserting 0 into an AUTO_INCREMENT column stores 0 instead of the next value",
	"PAD_CHAR_TO_FULL_LENGTH":    "CHAR values are read back with their trailing spaces",
	"REAL_AS_FLOAT":              "REAL means FLOAT instead of DOUBLE",
	"IGNORE_SPACE":               "function names may be followed by spaces, and become reserved",
	"HIGH_NOT_PRECEDENCE":        "NOT a BETWEEN b AND c parses differently",
	"NO_UNSIGNED_SUBTRACTION":    "subtracting unsigned values may give a negative result instead of an error",
	"NO_DIR_IN_CREATE":           "DATA DIRECTORY and INDEX DIRECTORY are ignored",
	"ALLOW_INVALID_DATES":        "dates such as '2024-02-31' are stored instead of refused",
	"TIME_TRUNCATE_FRACTIONAL":   "extra fractional seconds are cut instead of rounded",
	"EMPTY_STRING_IS_NULL":       "'' is stored as NULL",
	"SIMULTANEOUS_ASSIGNMENT":    "UPDATE ... SET a = b, b = a swaps the values",
	"ORACLE":                     "Oracle-compatible parsing (PL/SQL, || and more)",
	"ANSI":                       "ANSI-compatible parsing",
	"TRADITIONAL":                "strict mode with zero dates refused",
	"NO_FIELD_OPTIONS":           "SHOW CREATE TABLE omits MySQL-specific column options",
	"NO_KEY_OPTIONS":             "SHOW CREATE TABLE omits MySQL-specific index options",
	"NO_TABLE_OPTIONS":           "SHOW CREATE TABLE omits table options such as ENGINE",
}

// modes splits an sql_mode value into its modes.
func modes(v string) map[string]bool {
	out := map[string]bool{}
	for _, m := range strings.Split(v, ",") {
		if m = strings.ToUpper(strings.TrimSpace(m)); m != "" {
			out[m] = true
		}
	}
	return out
}

// sqlModeMessage says which modes only one side has and what each changes.
func sqlModeMessage(src, dst string) string {
	a, b := modes(src), modes(dst)
	var parts []string
	describe := func(m, where string) string {
		s := m + " only on the " + where
		if e := sqlModeEffects[m]; e != "" {
			s += " (on: " + e + ")"
		}
		return s
	}
	for _, m := range slices.Sorted(maps.Keys(b)) {
		if !a[m] {
			parts = append(parts, describe(m, "target"))
		}
	}
	for _, m := range slices.Sorted(maps.Keys(a)) {
		if !b[m] {
			parts = append(parts, describe(m, "source"))
		}
	}
	return "the same statements may fail, warn or store other values: " + strings.Join(parts, "; ")
}

// zeroDatesRejected says how the target's sql_mode treats zero dates: ""
// when it stores them, Warning when it stores them with a warning, Error
// when it refuses them (strict mode).
func (r *runner) zeroDatesRejected() string {
	if r.dst.vars == nil {
		return ""
	}
	m := modes(r.dst.vars["sql_mode"])
	if m["TRADITIONAL"] {
		return Error
	}
	if !m["NO_ZERO_DATE"] && !m["NO_ZERO_IN_DATE"] {
		return ""
	}
	if m["STRICT_TRANS_TABLES"] || m["STRICT_ALL_TABLES"] {
		return Error
	}
	return Warning
}
