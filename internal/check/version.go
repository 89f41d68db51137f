package check

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/target"
)

// serverVersion is a server's flavour and its own version number: for
// TiDB, TiDB's release (8.0.11-TiDB-v7.5.0 is TiDB 7.5.0), not the MySQL
// version it claims.
type serverVersion struct {
	flavour string // mysql, mariadb, tidb (percona reads as mysql)
	cluster string // galera for a Galera node, whose flavour reads as mariadb
	nums    [3]int
	raw     string
}

var (
	tidbVersionRE = regexp.MustCompile(`(?i)tidb-v?(\d+)\.(\d+)(?:\.(\d+))?`)
	versionRE     = regexp.MustCompile(`^(\d+)\.(\d+)(?:\.(\d+))?`)
)

func parseServer(s target.Server) serverVersion {
	// The feature table speaks of MySQL, MariaDB and TiDB: Percona
	// Server is MySQL there, and a Galera node MariaDB.
	v := serverVersion{flavour: string(s.Flavour), raw: s.Version}
	switch {
	case s.Flavour.IsMySQL():
		v.flavour = "mysql"
	case s.Flavour.IsMariaDB():
		v.flavour = "mariadb"
		if s.Flavour.Cluster() {
			v.cluster = string(s.Flavour)
		}
	}
	m := versionRE.FindStringSubmatch(s.Version)
	if v.flavour == "tidb" {
		m = tidbVersionRE.FindStringSubmatch(s.Version)
	}
	if m != nil {
		for i := 0; i < 3; i++ {
			v.nums[i], _ = strconv.Atoi(m[i+1])
		}
	}
	return v
}

func (v serverVersion) major() int { return v.nums[0] }

// atLeast reports whether the version is v or later; "" is always true.
func (v serverVersion) atLeast(min string) bool {
	if min == "" {
		return true
	}
	return compareVersions(v.nums, parseNums(min)) >= 0
}

// below reports whether the version is before max; "" is always true.
func (v serverVersion) below(max string) bool {
	if max == "" {
		return true
	}
	return compareVersions(v.nums, parseNums(max)) < 0
}

func parseNums(s string) [3]int {
	var out [3]int
	for i, p := range strings.SplitN(s, ".", 3) {
		out[i], _ = strconv.Atoi(p)
	}
	return out
}

func compareVersions(a, b [3]int) int {
	for i := range a {
		if a[i] != b[i] {
			if a[i] < b[i] {
				return -1
			}
			return 1
		}
	}
	return 0
}

// name is the flavour and version as people say it: MariaDB 10.11.19.
func (v serverVersion) name() string {
	f := map[string]string{"mysql": "MySQL", "mariadb": "MariaDB", "tidb": "TiDB"}[v.flavour]
	if f == "" {
		f = v.flavour
	}
	return f + " " + strconv.Itoa(v.nums[0]) + "." + strconv.Itoa(v.nums[1]) + "." + strconv.Itoa(v.nums[2])
}
