package oltp

import (
	"bytes"
	"errors"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-sql-driver/mysql"
	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/workload"
)

func TestStatementFor(t *testing.T) {
	tests := []struct {
		g     group
		table int
		want  string
	}{
		{gPoint, 1, "SELECT c FROM sbtest1 WHERE id=?"},
		{gSimple, 2, "SELECT c FROM sbtest2 WHERE id BETWEEN ? AND ?"},
		{gSum, 3, "SELECT SUM(k) FROM sbtest3 WHERE id BETWEEN ? AND ?"},
		{gOrder, 10, "SELECT c FROM sbtest10 WHERE id BETWEEN ? AND ? ORDER BY c"},
		{gDistinct, 1, "SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN ? AND ? ORDER BY c"},
		{gIndexUpdate, 1, "UPDATE sbtest1 SET k=k+1 WHERE id=?"},
		{gNonIndexUpdate, 4, "UPDATE sbtest4 SET c=? WHERE id=?"},
		{gDelete, 1, "DELETE FROM sbtest1 WHERE id=?"},
		{gInsert, 99, "INSERT INTO sbtest99 (id, k, c, pad) VALUES (?, ?, ?, ?)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := statementFor(tt.g, tt.table); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCreateTableSQL(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Options)
		table  int
		want   string
	}{
		{"defaults", func(*Options) {}, 1, "CREATE TABLE sbtest1(\n" +
			"  id INTEGER NOT NULL AUTO_INCREMENT,\n" +
			"  k INTEGER DEFAULT '0' NOT NULL,\n" +
			"  c CHAR(120) DEFAULT '' NOT NULL,\n" +
			"  pad CHAR(60) DEFAULT '' NOT NULL,\n" +
			"  PRIMARY KEY (id)\n" +
			") /*! ENGINE = innodb */ "},
		{"auto_inc off", func(o *Options) { o.AutoInc = false }, 2, "CREATE TABLE sbtest2(\n" +
			"  id INTEGER NOT NULL,\n" +
			"  k INTEGER DEFAULT '0' NOT NULL,\n" +
			"  c CHAR(120) DEFAULT '' NOT NULL,\n" +
			"  pad CHAR(60) DEFAULT '' NOT NULL,\n" +
			"  PRIMARY KEY (id)\n" +
			") /*! ENGINE = innodb */ "},
		{"secondary, engine and options", func(o *Options) {
			o.Secondary = true
			o.StorageEngine = "myisam"
			o.CreateTableOptions = "COMMENT='x'"
		}, 3, "CREATE TABLE sbtest3(\n" +
			"  id INTEGER NOT NULL AUTO_INCREMENT,\n" +
			"  k INTEGER DEFAULT '0' NOT NULL,\n" +
			"  c CHAR(120) DEFAULT '' NOT NULL,\n" +
			"  pad CHAR(60) DEFAULT '' NOT NULL,\n" +
			"  KEY xid (id)\n" +
			") /*! ENGINE = myisam */ COMMENT='x'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			tt.change(&o)
			if got := createTableSQL(tt.table, &o); got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestOtherDDL(t *testing.T) {
	tests := []struct {
		name, got, want string
	}{
		{"index", createIndexSQL(7), "CREATE INDEX k_7 ON sbtest7(k)"},
		{"drop", dropTableSQL(12), "DROP TABLE IF EXISTS sbtest12"},
		{"bulk table", bulkCreateTableSQL(2), "CREATE TABLE IF NOT EXISTS sbtest2 (\n" +
			"          id INTEGER NOT NULL,\n" +
			"          k INTEGER DEFAULT '0' NOT NULL,\n" +
			"          PRIMARY KEY (id))"},
		{"random points", randomPointsSQL(3), "        SELECT id, k, c, pad\n" +
			"          FROM sbtest1\n" +
			"          WHERE k IN (?, ?, ?)\n" +
			"        "},
		{"one random point", randomPointsSQL(1), "        SELECT id, k, c, pad\n" +
			"          FROM sbtest1\n" +
			"          WHERE k IN (?)\n" +
			"        "},
		{"random ranges", randomRangesSQL(2), "        SELECT count(k)\n" +
			"          FROM sbtest1\n" +
			"          WHERE k BETWEEN ? AND ? OR k BETWEEN ? AND ?"},
		{"insert", string(appendInsertSQL(nil, 3, -5, 42, []byte("1-2"), []byte("3"))),
			"INSERT INTO sbtest3 (id, k, c, pad) VALUES (-5, 42, '1-2', '3')"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got\n%q\nwant\n%q", tt.got, tt.want)
			}
		})
	}
}

func TestTemplates(t *testing.T) {
	if len(cTemplate) != 119 || strings.Count(cTemplate, "-") != 9 || strings.Count(cTemplate, "#") != 110 {
		t.Errorf("c template %q: want 10 groups of 11 digits, 119 chars", cTemplate)
	}
	if len(padTemplate) != 59 || strings.Count(padTemplate, "-") != 4 || strings.Count(padTemplate, "#") != 55 {
		t.Errorf("pad template %q: want 5 groups of 11 digits, 59 chars", padTemplate)
	}
	r := randgen.Defaults().New(0)
	v := newValue(cTemplate)
	a := v.next(r).(string)
	first := strings.Clone(a)
	if !regexp.MustCompile(`^([0-9]{11}-){9}[0-9]{11}$`).MatchString(first) {
		t.Errorf("got c %q, want 10 groups of 11 digits", first)
	}
	if b := v.next(r).(string); b == first {
		t.Errorf("got the same c twice: %q", b)
	}
}

// TestPlans checks each workload's statements per event against what real
// sysbench 1.0.20 sent (comCases, measured on MariaDB 10.11).
func TestPlans(t *testing.T) {
	for _, tc := range comCases {
		m, _ := workload.Lookup(tc.workload)
		g := m.New().(*generator)
		switch g.kind {
		case insert, randomPoints, randomRanges, bulkInsert:
			continue // no statement groups
		}
		t.Run(tc.name, func(t *testing.T) {
			if err := g.Flags().Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			p := planFor(g.kind, &g.opts)
			got := p.statementsPerEvent()
			w := tc.want
			want := expectedCom{int(w.Select), int(w.Update), int(w.Insert), int(w.Delete), int(w.Begin), int(w.Commit)}
			if got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if n := got.Select + got.Update + got.Insert + got.Delete + got.Begin + got.Commit; int64(n) != w.StmtExecute {
				t.Errorf("got %d statements, want %d prepared executions", n, w.StmtExecute)
			}
		})
	}
}

func TestPlanPrepared(t *testing.T) {
	o := DefaultOptions()
	o.PointSelects = 0
	o.SimpleRanges = 0
	p := planFor(readWrite, &o)
	// sysbench prepares a group even when its count is 0.
	for _, g := range []group{gPoint, gSimple, gSum, gOrder, gDistinct, gIndexUpdate, gNonIndexUpdate, gDelete, gInsert} {
		if !p.prepared[g] {
			t.Errorf("group %d not prepared, want prepared", g)
		}
	}
	o.RangeSelects = false
	p = planFor(readOnly, &o)
	for _, g := range []group{gSimple, gSum, gOrder, gDistinct, gIndexUpdate, gDelete} {
		if p.prepared[g] {
			t.Errorf("read_only with range_selects off prepares group %d", g)
		}
	}
	if p := planFor(deleteOnly, &o); p.deleteInserts || p.count[gInsert] != 0 {
		t.Errorf("oltp_delete plans INSERTs: %+v", p)
	}
}

func TestFlags(t *testing.T) {
	tests := []struct {
		name     string
		workload string
		args     []string
		check    func(o Options) bool
	}{
		{"defaults", "oltp_read_write", nil, func(o Options) bool { return o == DefaultOptions() }},
		{"underscores", "oltp_read_write", []string{"--table_size=5", "--point_selects=2", "--delete_inserts=0"},
			func(o Options) bool { return o.TableSize == 5 && o.PointSelects == 2 && o.DeleteInserts == 0 }},
		{"booleans", "oltp_read_write", []string{"--skip_trx=on", "--range-selects=off", "--auto_inc=false", "--secondary"},
			func(o Options) bool { return o.SkipTrx && !o.RangeSelects && !o.AutoInc && o.Secondary }},
		{"engine and options", "oltp_insert", []string{"--mysql_storage_engine=myisam", "--create_table_options=ROW_FORMAT=DYNAMIC"},
			func(o Options) bool {
				return o.StorageEngine == "myisam" && o.CreateTableOptions == "ROW_FORMAT=DYNAMIC"
			}},
		{"random points", "select_random_points", []string{"--random_points=4"}, func(o Options) bool { return o.RandomPoints == 4 }},
		{"random ranges", "select_random_ranges", []string{"--number_of_ranges=4", "--delta=9"},
			func(o Options) bool { return o.NumberOfRanges == 4 && o.Delta == 9 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, _ := workload.Lookup(tt.workload)
			g := m.New().(*generator)
			if err := g.Flags().Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if !tt.check(g.opts) {
				t.Errorf("got %+v", g.opts)
			}
			if err := g.Validate(); err != nil {
				t.Errorf("got %v, want no error", err)
			}
		})
	}
}

// TestFlagsPerWorkload: each script has the options sysbench's has.
// bulk_insert reads none, but takes oltp_common.lua's and ignores them, as
// sysbench does: hidden, they change nothing.
func TestFlagsPerWorkload(t *testing.T) {
	tests := []struct {
		workload string
		has      []string
		lacks    []string
		ignored  []string // taken, hidden and ignored
	}{
		{"oltp_read_write", []string{"table-size", "tables", "range-selects", "create-secondary", "mysql-storage-engine"}, []string{"random-points", "delta"}, nil},
		{"select_random_points", []string{"random-points", "table-size"}, []string{"number-of-ranges"}, nil},
		{"select_random_ranges", []string{"number-of-ranges", "delta"}, []string{"random-points"}, nil},
		{"bulk_insert", nil, []string{"create-table-options", "random-points", "number-of-ranges"},
			[]string{"table-size", "tables", "range-size", "point-selects", "simple-ranges", "sum-ranges", "order-ranges", "distinct-ranges", "index-updates",
				"non-index-updates", "delete-inserts", "range-selects", "auto-inc", "skip-trx", "secondary", "create-secondary", "mysql-storage-engine", "pgsql-variant"}},
	}
	for _, tt := range tests {
		t.Run(tt.workload, func(t *testing.T) {
			m, _ := workload.Lookup(tt.workload)
			fs := m.New().(workload.Flagser).Flags()
			for _, n := range tt.has {
				if f := fs.Lookup(n); f == nil || f.Hidden {
					t.Errorf("lacks --%s", n)
				}
			}
			for _, n := range tt.ignored {
				if f := fs.Lookup(n); f == nil || !f.Hidden {
					t.Errorf("got --%s %v, want it taken and hidden", n, f)
				}
			}
			if tt.ignored != nil {
				fs.VisitAll(func(f *pflag.Flag) {
					if !f.Hidden {
						t.Errorf("got --%s in the help, want no option of its own", f.Name)
					}
				})
			}
			for _, n := range tt.lacks {
				if fs.Lookup(n) != nil {
					t.Errorf("has --%s, which sysbench's script does not", n)
				}
			}
		})
	}
}

func TestRegistered(t *testing.T) {
	for _, m := range metas {
		got, ok := workload.Lookup(m.name)
		if !ok {
			t.Errorf("%s is not registered", m.name)
			continue
		}
		g := got.New()
		if g.Meta().Name != m.name {
			t.Errorf("%s: got Meta().Name %q", m.name, g.Meta().Name)
		}
		for what, ok := range map[string]bool{
			"Flagser":   implements[workload.Flagser](g),
			"Validator": implements[workload.Validator](g),
			"Preparer":  implements[workload.Preparer](g),
			"Cleaner":   implements[workload.Cleaner](g),
			"Opser":     implements[workload.Opser](g),
		} {
			if !ok {
				t.Errorf("%s is not a %s", m.name, what)
			}
		}
	}
}

func implements[T any](v any) bool { _, ok := v.(T); return ok }

func TestValidate(t *testing.T) {
	tests := []struct {
		workload string
		args     []string
		want     string
	}{
		{"oltp_read_write", []string{"--tables=0"}, "--tables must be >= 1"},
		{"oltp_read_write", []string{"--table-size=-1"}, "--table-size must be >= 0"},
		{"oltp_read_write", []string{"--table-size=3000000000"}, "--table-size must be <= 2147483647"},
		{"oltp_read_only", []string{"--point_selects=-1"}, "--point-selects must be >= 0"},
		{"oltp_read_write", []string{"--range_size=-1"}, "--range-size must be >= 0"},
		{"oltp_write_only", []string{"--delete_inserts=-2"}, "--delete-inserts must be >= 0"},
		{"oltp_read_write", []string{"--mysql_storage_engine=innodb; DROP"}, `--mysql-storage-engine must be a storage engine name such as innodb (got "innodb; DROP")`},
		{"select_random_points", []string{"--random_points=0"}, "--random-points must be >= 1"},
		{"select_random_ranges", []string{"--number_of_ranges=0"}, "--number-of-ranges must be >= 1"},
		{"select_random_ranges", []string{"--delta=-1"}, "--delta must be >= 0"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			m, _ := workload.Lookup(tt.workload)
			g := m.New().(*generator)
			if err := g.Flags().Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			if err := g.Validate(); err == nil || err.Error() != tt.want {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestThreadSlice(t *testing.T) {
	tests := []struct {
		size, id, threads int
		lo, hi            int64
	}{
		{10000, 0, 1, 0, 10000},
		{10000, 0, 3, 0, 3333},
		{10000, 1, 3, 3333, 6666},
		{10000, 2, 3, 6666, 10000},
		{10, 3, 4, 7, 10},
	}
	for _, tt := range tests {
		lo, hi := threadSlice(tt.size, tt.id, tt.threads)
		if lo != tt.lo || hi != tt.hi {
			t.Errorf("threadSlice(%d, %d, %d) = %d, %d, want %d, %d", tt.size, tt.id, tt.threads, lo, hi, tt.lo, tt.hi)
		}
	}
}

func TestChunks(t *testing.T) {
	tests := []struct {
		name                  string
		tables, size, workers int
		chunkRows             int64
		wantPerTable          int
	}{
		{"more tables than workers", 8, 1000, 4, 1 << 20, 1},
		{"one table four workers", 1, 1000, 4, 1 << 20, 4},
		{"three tables four workers", 3, 1000, 4, 1 << 20, 2},
		{"big table", 2, 10000, 2, 3000, 4},
		{"fewer rows than workers", 1, 2, 8, 1 << 20, 2},
		{"empty", 2, 0, 4, 1 << 20, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.Tables, o.TableSize = tt.tables, tt.size
			l := &loader{opts: &o, chunkRows: tt.chunkRows}
			cs := l.chunks(tt.workers)
			if len(cs) != tt.tables*tt.wantPerTable {
				t.Fatalf("got %d chunks, want %d per table", len(cs), tt.wantPerTable)
			}
			next := map[int]int64{}
			for _, c := range cs {
				if next[c.table] == 0 {
					next[c.table] = 1
					if !c.first {
						t.Errorf("table %d: first chunk not marked first", c.table)
					}
				}
				if c.from != next[c.table] {
					t.Errorf("table %d: chunk starts at %d, want %d", c.table, c.from, next[c.table])
				}
				next[c.table] = c.to + 1
				if got := c.left.Load(); got != int32(tt.wantPerTable) {
					t.Errorf("table %d: %d chunks left, want %d", c.table, got, tt.wantPerTable)
				}
			}
			for tb := 1; tb <= tt.tables; tb++ {
				if next[tb] != int64(tt.size)+1 {
					t.Errorf("table %d: chunks end at %d, want %d", tb, next[tb]-1, tt.size)
				}
			}
		})
	}
}

func TestRowReader(t *testing.T) {
	cfg := randgen.Defaults()
	cfg.Seed = 1
	r := &rowReader{gen: rowGen{rnd: cfg.New(0), tableSize: 1000, sep: '\t'}, next: 11, to: 2010}
	// Read in odd sizes so lines straddle reads.
	var all bytes.Buffer
	buf := make([]byte, 777)
	for {
		n, err := r.Read(buf)
		all.Write(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSuffix(all.String(), "\n"), "\n")
	if len(lines) != 2000 {
		t.Fatalf("got %d lines, want 2000", len(lines))
	}
	line := regexp.MustCompile(`^(\d+)\t(\d+)\t(?:[0-9]{11}-){9}[0-9]{11}\t(?:[0-9]{11}-){4}[0-9]{11}$`)
	for i, l := range lines {
		m := line.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("line %d: got %q", i, l)
		}
		if id, _ := strconv.Atoi(m[1]); id != 11+i {
			t.Fatalf("line %d: got id %d, want %d", i, id, 11+i)
		}
		if k, _ := strconv.Atoi(m[2]); k < 1 || k > 1000 {
			t.Fatalf("line %d: got k %d, want 1..1000", i, k)
		}
	}
}

func TestAppendValues(t *testing.T) {
	cfg := randgen.Defaults()
	g := rowGen{rnd: cfg.New(0), tableSize: 50}
	got := string(g.appendValues(nil, 123))
	if !regexp.MustCompile(`^\(123, \d+, '(?:[0-9]{11}-){9}[0-9]{11}', '(?:[0-9]{11}-){4}[0-9]{11}'\)$`).MatchString(got) {
		t.Errorf("got %q", got)
	}
}

func TestAppendInt(t *testing.T) {
	for _, v := range []int64{0, 7, 10, 99, 1000000, 2147483647} {
		if got := string(appendInt(nil, v)); got != strconv.FormatInt(v, 10) {
			t.Errorf("appendInt(%d) = %q", v, got)
		}
	}
}

func TestJobs(t *testing.T) {
	tests := []struct {
		name    string
		noSplit bool
		tables  int
		size    int
		want    []int // chunks per job
	}{
		{"split one table", false, 1, 1000, []int{1, 1, 1, 1}},
		{"no split one table", true, 1, 1000, []int{1}},
		{"no split big tables", true, 2, 2500, []int{3, 3}},
		{"split big tables", false, 2, 2500, []int{1, 1, 1, 1, 1, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			o.Tables, o.TableSize = tt.tables, tt.size
			l := &loader{opts: &o, chunkRows: 1000, noSplit: tt.noSplit}
			jobs := l.jobs(4)
			var got []int
			for _, j := range jobs {
				got = append(got, len(j))
				for _, c := range j[1:] {
					if c.table != j[0].table {
						t.Errorf("a job mixes tables %d and %d", j[0].table, c.table)
					}
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got chunks per job %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLoadDataRefused(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"mariadb capability off", &mysql.MySQLError{Number: 4166, Message: "The used command is not allowed because the MariaDB server or client has disabled the local infile capability"}, true},
		{"mysql 8 client side", &mysql.MySQLError{Number: 3948, Message: "Loading local data is disabled; this must be enabled on both the client and server sides"}, true},
		{"go-mysql-server", &mysql.MySQLError{Number: 1105, Message: "local_infile needs to be set to 1 to use LOCAL"}, true},
		{"other unknown error", &mysql.MySQLError{Number: 1105, Message: "something else broke"}, false},
		{"duplicate key", &mysql.MySQLError{Number: 1062, Message: "Duplicate entry '1' for key 'PRIMARY'"}, false},
		{"driver refusal", errors.New("local file 'Reader::x' is not registered"), false},
		{"driver not allowed", errors.New("LOAD DATA LOCAL INFILE not allowed"), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := loadDataRefused(tc.err); got != tc.want {
				t.Errorf("loadDataRefused(%v): got %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
