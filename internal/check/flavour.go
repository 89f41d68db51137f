package check

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// gap is one row of the feature table: a feature that the target's
// flavour lacks, in a range of its versions.
type gap struct {
	flavour  string // the target's flavour: tidb, vitess, mysql, mariadb
	feature  string // a detector's name (features below)
	from     string // first target version lacking it ("" = every earlier one)
	before   string // first target version having it ("" = none yet)
	severity string
	why      string
	fix      string
}

// gaps is the feature table, per target flavour. Sources: TiDB's MySQL
// compatibility page; MySQL 8.0's removals (what MySQL Shell's upgrade
// checker looks for); MariaDB's incompatibilities with MySQL 8.
var gaps = []gap{
	{"tidb", "stored_routine", "", "", Error, "TiDB has no stored procedures or functions: CALL and calls to the function fail",
		"move the routine's logic into the application"},
	{"tidb", "trigger", "", "", Error, "TiDB has no triggers: what the trigger does stops happening",
		"move it into the application, or into a consumer of TiCDC's change feed"},
	{"tidb", "event", "", "", Error, "TiDB has no event scheduler: the event never runs",
		"schedule the job outside the database (cron, a job runner)"},
	{"tidb", "fulltext_index", "", "", Error, "TiDB has no FULLTEXT indexes: MATCH ... AGAINST fails",
		"drop the index and search elsewhere (LIKE, an external search engine)"},
	{"tidb", "spatial", "", "", Error, "TiDB has no spatial types, functions or indexes",
		"store coordinates in numeric columns, or keep spatial data elsewhere"},
	{"tidb", "foreign_key", "", "6.6.0", Warning, "TiDB before 6.6 parses foreign keys but does not enforce them",
		"enforce the relationship in the application, or use TiDB 6.6 or later"},
	{"tidb", "subpartition", "", "", Error, "TiDB has no subpartitions", "partition on one level only"},
	{"tidb", "descending_index", "", "", Notice, "TiDB parses DESC in an index and stores it ascending",
		"nothing to do unless a query relied on a backward scan being cheap"},
	{"tidb", "system_versioned", "", "", Error, "TiDB has no system-versioned tables (a MariaDB feature)", "keep history in a table of its own"},
	{"tidb", "mariadb_type", "", "", Error, "TiDB has no INET4, INET6 or UUID types (MariaDB types)", "use VARBINARY(16) or CHAR(36)"},
	{"tidb", "udf", "", "", Error, "TiDB has no loadable functions (CREATE FUNCTION ... SONAME): calls to them fail",
		"reimplement the function in SQL expressions or in the application"},
	{"tidb", "xml_function", "", "", Error, "TiDB has no XML functions (ExtractValue, UpdateXML): the body fails when it runs",
		"parse the XML in the application"},
	{"tidb", "column_privilege", "", "", Error, "TiDB has no column-level privileges: the GRANT fails, and a table-level one would allow more",
		"grant on the table (to a view of the allowed columns, if the account must not see the others)"},
	{"tidb", "auto_increment", "", "", Notice, "TiDB's AUTO_INCREMENT values are unique but not consecutive: each TiDB server takes its own batch",
		"do not rely on ids growing in insert order; AUTO_ID_CACHE=1 gives MySQL's behaviour at some cost"},

	{"mysql", "removed_function", "8.0.0", "", Error, "MySQL 8.0 removed ENCODE, DECODE, ENCRYPT, DES_ENCRYPT, DES_DECRYPT and PASSWORD: the body fails when it runs",
		"rewrite it with AES_ENCRYPT/AES_DECRYPT or SHA2"},
	{"mysql", "nonnative_partitioning", "8.0.0", "", Error, "MySQL 8.0 partitions only InnoDB and NDB tables: the table cannot be created",
		"convert the table to InnoDB, or remove its partitioning"},
	{"mysql", "sequence", "", "", Error, "MySQL has no sequences (a MariaDB feature)", "use an AUTO_INCREMENT column or a counter table"},
	{"mysql", "system_versioned", "", "", Error, "MySQL has no system-versioned tables (a MariaDB feature)", "keep history in a table of its own"},
	{"mysql", "mariadb_type", "", "", Error, "MySQL has no INET4, INET6 or UUID types (MariaDB types)", "use VARBINARY(16) or CHAR(36)"},
	{"mysql", "descending_index", "", "8.0.0", Notice, "MySQL before 8.0 parses DESC in an index and stores it ascending",
		"nothing to do unless a query relied on a backward scan being cheap"},

	{"vitess", "trigger", "", "", Error, "vtgate cannot create triggers (it does not parse CREATE TRIGGER): a copy leaves them out, and what they do stops happening",
		"create them on the server beneath, in each shard's database, or move what they do into the application"},
	{"vitess", "stored_routine", "", "", Error, "vtgate cannot create stored functions (it passes CREATE PROCEDURE only): a copy leaves routines out, and calls to them fail",
		"create them on the server beneath, in each shard's database, or move their logic into the application"},
	{"vitess", "event", "", "", Error, "vtgate cannot create events (it does not parse CREATE EVENT): the event never runs",
		"schedule the job outside the database (cron, a job runner)"},

	{"galera", "auto_increment", "", "", Notice, "Galera sets auto_increment_increment to the number of nodes and the offset to each node's place (wsrep_auto_increment_control): ids skip, and are not consecutive in insert order",
		"do not rely on consecutive ids; the application sees gaps of the cluster's size"},

	{"mariadb", "functional_index", "", "", Error, "MariaDB has no functional index parts (a MySQL 8.0.13 feature): the table cannot be created",
		"index a generated column that holds the expression"},
	{"mariadb", "json_type", "", "", Warning, "MariaDB's JSON is LONGTEXT with a json_valid check: documents are stored and compared as text, and keys keep their order and spacing",
		"compare JSON with JSON functions, not as strings; test queries that read it"},
	{"mariadb", "descending_index", "", "10.8.0", Notice, "MariaDB before 10.8 parses DESC in an index and stores it ascending",
		"nothing to do unless a query relied on a backward scan being cheap"},
}

// lacks returns the gaps that apply to a target server.
func lacks(target serverVersion) []gap {
	var out []gap
	for _, g := range gaps {
		if g.flavour != target.flavour && g.flavour != target.cluster {
			continue
		}
		if (g.from == "" || target.atLeast(g.from)) && target.below(g.before) {
			out = append(out, g)
		}
	}
	return out
}

// flavourLacks lists the features the target lacks, for the inventory not
// to report the same objects twice.
func (r *runner) flavourLacks() map[string]bool {
	out := map[string]bool{}
	for _, g := range lacks(r.dst.server) {
		out[g.feature] = true
	}
	return out
}

var (
	removedFuncRE = regexp.MustCompile(`(?i)\b(ENCODE|DECODE|ENCRYPT|DES_ENCRYPT|DES_DECRYPT|PASSWORD)\s*\(`)
	xmlFuncRE     = regexp.MustCompile(`(?i)\b(EXTRACTVALUE|UPDATEXML)\s*\(`)
	spatialTypes  = map[string]bool{"geometry": true, "point": true, "linestring": true, "polygon": true, "multipoint": true,
		"multilinestring": true, "multipolygon": true, "geometrycollection": true, "geomcollection": true}
	mariadbTypes = map[string]bool{"inet4": true, "inet6": true, "uuid": true}
)

// features finds, on the source, the objects that use each feature of the
// table: feature -> objects, each with what it is.
func (s *snapshot) features() map[string][]string {
	out := map[string][]string{}
	add := func(f, obj string) { out[f] = append(out[f], obj) }
	for _, n := range slices.Sorted(maps.Keys(s.routines)) {
		add("stored_routine", strings.ToLower(s.routines[n])+" "+n)
	}
	for _, n := range slices.Sorted(maps.Keys(s.triggers)) {
		add("trigger", "trigger "+n)
	}
	for _, n := range slices.Sorted(maps.Keys(s.events)) {
		add("event", "event "+n)
	}
	for _, n := range slices.Sorted(maps.Keys(s.tables)) {
		t := s.tables[n]
		for _, ix := range t.Indexes {
			switch ix.Type {
			case "FULLTEXT":
				add("fulltext_index", "FULLTEXT index "+ix.Name+" on "+n)
			case "SPATIAL":
				add("spatial", "SPATIAL index "+ix.Name+" on "+n)
			}
			for _, c := range ix.Columns {
				if c == "(expression)" {
					add("functional_index", "index "+ix.Name+" on "+n)
					break
				}
			}
		}
		for _, c := range t.Columns {
			switch {
			case spatialTypes[c.DataType]:
				add("spatial", c.DataType+" column "+n+"."+c.Name)
			case mariadbTypes[c.DataType] && s.server.flavour == "mariadb":
				add("mariadb_type", c.DataType+" column "+n+"."+c.Name)
			case c.DataType == "json" && !c.IsJSONText && s.server.flavour != "mariadb":
				add("json_type", "JSON column "+n+"."+c.Name)
			}
			if strings.Contains(c.Extra, "auto_increment") {
				add("auto_increment", "AUTO_INCREMENT column "+n+"."+c.Name)
			}
		}
	}
	for _, n := range slices.Sorted(maps.Keys(s.info)) {
		t := s.info[n]
		switch strings.ToUpper(t.typ) {
		case "SEQUENCE":
			add("sequence", "sequence "+n)
		case "SYSTEM VERSIONED":
			add("system_versioned", "system-versioned table "+n)
		}
		e := strings.ToLower(t.engine)
		if strings.Contains(strings.ToLower(t.createOpts), "partitioned") && e != "innodb" && e != "ndbcluster" && e != "" {
			add("nonnative_partitioning", t.engine+" partitioned table "+n)
		}
	}
	for _, n := range s.fks {
		add("foreign_key", "foreign key "+n)
	}
	for _, n := range s.subparts {
		add("subpartition", "subpartitioned table "+n)
	}
	for _, n := range s.descIdx {
		add("descending_index", "descending index "+n)
	}
	for _, b := range s.bodies {
		if m := removedFuncRE.FindStringSubmatch(b.text); m != nil {
			add("removed_function", fmt.Sprintf("%s %s (calls %s)", b.kind, b.object, strings.ToUpper(m[1])))
		}
		if m := xmlFuncRE.FindStringSubmatch(b.text); m != nil {
			add("xml_function", fmt.Sprintf("%s %s (calls %s)", b.kind, b.object, strings.ToUpper(m[1])))
		}
	}
	for _, n := range s.udfs {
		add("udf", "loadable function "+n)
	}
	for _, n := range slices.Sorted(maps.Keys(s.accounts)) {
		for p := range s.accounts[n].privs {
			if p.column != "" {
				add("column_privilege", "column privileges of "+n)
				break
			}
		}
	}
	for f := range out {
		sort.Strings(out[f])
	}
	return out
}

// featureItems are the snapshot items each feature's detection reads.
var featureItems = map[string][]string{
	"stored_routine": {"routines"}, "trigger": {"triggers"}, "event": {"events"},
	"fulltext_index": {"tables"}, "spatial": {"tables"}, "functional_index": {"tables"}, "mariadb_type": {"tables"},
	"json_type": {"tables"}, "auto_increment": {"tables"}, "sequence": {"tableinfo"}, "system_versioned": {"tableinfo"},
	"nonnative_partitioning": {"tableinfo"}, "foreign_key": {"foreignkeys"}, "subpartition": {"partitions"},
	"descending_index": {"indexstats"}, "removed_function": {"routines", "triggers", "events", "views"},
	"xml_function": {"routines", "triggers", "events", "views"}, "udf": {"udfs"}, "column_privilege": {"accounts", "privileges"},
}

// checkFeatures applies the feature table of the target's flavour and
// version (as the server reports them) to what the source uses.
func (r *runner) checkFeatures() {
	const id = "unsupported_feature"
	applicable := lacks(r.dst.server)
	if len(applicable) == 0 {
		return
	}
	used := r.src.features()
	for _, g := range applicable {
		if !r.have(id, r.src, featureItems[g.feature]...) {
			continue
		}
		objs := used[g.feature]
		if g.feature == "auto_increment" && len(objs) > 0 {
			// One notice for all of them: it is about the server, not a table.
			r.add(id, g.severity, fmt.Sprintf("%d AUTO_INCREMENT columns", len(objs)),
				fmt.Sprintf("%s (%s): %s", r.dst.server.name(), list(objs, 3), g.why), g.fix)
			continue
		}
		for _, o := range objs {
			r.add(id, g.severity, o, fmt.Sprintf("%s: %s", r.dst.server.name(), g.why), g.fix)
		}
	}
}
