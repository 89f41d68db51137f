package dbcopy

import (
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/escape"
)

func TestSplitCreateTable(t *testing.T) {
	create := "CREATE TABLE `orders` (\n" +
		"  `id` int(11) NOT NULL,\n" +
		"  `customer_id` int(11) NOT NULL,\n" +
		"  `note` text DEFAULT NULL,\n" +
		"  PRIMARY KEY (`id`),\n" +
		"  UNIQUE KEY `u` (`note`(10)),\n" +
		"  KEY `cust_ix` (`customer_id`),\n" +
		"  FULLTEXT KEY `ft` (`note`),\n" +
		"  CONSTRAINT `fk_customer` FOREIGN KEY (`customer_id`) REFERENCES `customers` (`id`),\n" +
		"  CONSTRAINT `positive` CHECK (`id` > 0)\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
	cases := []struct {
		name                 string
		deferIndexes         bool
		wantIn, wantNotIn    []string
		wantIndexes, wantFKs int
	}{
		{"indexes after the rows", true,
			[]string{"PRIMARY KEY (`id`),\n", "UNIQUE KEY `u`", "CONSTRAINT `positive` CHECK (`id` > 0)\n) ENGINE=InnoDB"},
			[]string{"cust_ix", "FULLTEXT", "FOREIGN KEY"}, 2, 1},
		{"indexes with the table", false,
			[]string{"KEY `cust_ix` (`customer_id`),", "FULLTEXT KEY `ft`"},
			[]string{"FOREIGN KEY"}, 0, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := splitCreateTable(create, "orders", tc.deferIndexes, nil)
			for _, s := range tc.wantIn {
				if !strings.Contains(d.create, s) {
					t.Errorf("create: got\n%s\nwant it to hold %q", d.create, s)
				}
			}
			for _, s := range tc.wantNotIn {
				if strings.Contains(d.create, s) {
					t.Errorf("create: got\n%s\nwant no %q", d.create, s)
				}
			}
			if len(d.indexes) != tc.wantIndexes || len(d.fks) != tc.wantFKs {
				t.Errorf("got %d index and %d foreign key statements, want %d and %d: %q %q", len(d.indexes), len(d.fks), tc.wantIndexes, tc.wantFKs, d.indexes, d.fks)
			}
		})
	}
}

func TestRetarget(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"view", "CREATE ALGORITHM=UNDEFINED DEFINER=`root`@`localhost` SQL SECURITY DEFINER VIEW `v` AS select `shop`.`t`.`id` AS `id` from `shop`.`t`",
			"CREATE ALGORITHM=UNDEFINED SQL SECURITY DEFINER VIEW `v` AS select `copy`.`t`.`id` AS `id` from `copy`.`t`"},
		{"trigger", "CREATE DEFINER=`a b`@`%` TRIGGER tr AFTER INSERT ON t FOR EACH ROW SET @x = 1",
			"CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW SET @x = 1"},
		{"other database kept", "select * from `shop2`.`t`", "select * from `shop2`.`t`"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := retarget(tc.in, "shop", "copy"); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestEscaping(t *testing.T) {
	in := []byte("a\tb\nc\\d\x00e\rf'g\x1a")
	cases := []struct {
		name string
		got  string
		want string
	}{
		{"load data", string(escape.Append(nil, in, &escape.LoadData)), `a\tb\nc\\d\0e\rf'g` + "\x1a"},
		{"string literal", string(appendLiteral(nil, in, 's')), `'a` + "\t" + `b\nc\\d\0e\rf\'g\Z'`},
		{"hex literal", string(appendLiteral(nil, []byte{0, 0xff}, 'x')), "X'00ff'"},
		{"number", string(appendLiteral(nil, []byte("5"), 'n')), "5"},
		{"NULL", string(appendLiteral(nil, nil, 's')), "NULL"},
		{"empty string", string(appendLiteral(nil, []byte{}, 's')), "''"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

func TestFollowFKs(t *testing.T) {
	fks := []*fkEdge{
		{name: "fk_customer", child: "d.orders", parent: "d.customers", cols: []string{"customer_id"}, pcols: []string{"id"}},
		{name: "fk_order", child: "d.items", parent: "d.orders", cols: []string{"order_id"}, pcols: []string{"id"}},
		{name: "fk_manager", child: "d.customers", parent: "d.customers", cols: []string{"manager"}, pcols: []string{"id"}},
	}
	got, notes, err := followFKs(map[string]string{"d.orders": "id < 5"}, fks, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"d.orders":    "(id < 5) OR (`id`) IN (SELECT `order_id` FROM `items` WHERE (`order_id`) IN (SELECT `id` FROM `orders` WHERE (id < 5)))",
		"d.items":     "(`order_id`) IN (SELECT `id` FROM `orders` WHERE (id < 5))",
		"d.customers": "(`id`) IN (SELECT `customer_id` FROM `orders` WHERE (id < 5) OR (`id`) IN (SELECT `order_id` FROM `items` WHERE (`order_id`) IN (SELECT `id` FROM `orders` WHERE (id < 5))))",
	}
	for table, w := range want {
		if got[table] != w {
			t.Errorf("%s: got %q, want %q", table, got[table], w)
		}
	}
	if len(got) != len(want) || len(notes) != 1 {
		t.Errorf("got %d conditions and notes %q, want %d and one note on the self-reference", len(got), notes, len(want))
	}
	cycle := append(fks, &fkEdge{name: "fk_back", child: "d.customers", parent: "d.items", cols: []string{"x"}, pcols: []string{"order_id"}})
	if _, _, err := followFKs(map[string]string{"d.orders": "id < 5"}, cycle, 1); err == nil || !strings.Contains(err.Error(), "--follow-fk=false") {
		t.Errorf("a cycle: got %v, want an error naming --follow-fk=false", err)
	}
}

func TestParseFlags(t *testing.T) {
	cases := []struct {
		name, where string
		table, cond string
		ok          bool
		sample      string
		fraction    float64
		sampleOK    bool
	}{
		{"qualified", "shop.orders: id < 10", "shop.orders", "id < 10", true, "10%", 0.1, true},
		{"colon in condition", "t: placed < '2026-01-01 12:00'", "t", "placed < '2026-01-01 12:00'", true, "0.5", 0.5, true},
		{"no table", "id < 10", "", "", false, "0", 0, false},
		{"two statements", "t: 1; DROP TABLE t", "", "", false, "150%", 0, false},
		{"empty condition", "t: ", "", "", false, "x%", 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			table, cond, err := ParseWhere(tc.where)
			if (err == nil) != tc.ok || table != tc.table || cond != tc.cond {
				t.Errorf("ParseWhere(%q): got %q, %q, %v; want %q, %q, ok %v", tc.where, table, cond, err, tc.table, tc.cond, tc.ok)
			}
			f, err := ParseSample(tc.sample)
			if (err == nil) != tc.sampleOK || f != tc.fraction {
				t.Errorf("ParseSample(%q): got %v, %v; want %v, ok %v", tc.sample, f, err, tc.fraction, tc.sampleOK)
			}
		})
	}
}

func FuzzParseWhere(f *testing.F) {
	for _, s := range []string{"shop.orders: id < 10", "t: a = ':'", "x", ":", "t:;"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		table, cond, err := ParseWhere(s)
		if err != nil {
			return
		}
		if table == "" || cond == "" || strings.Contains(cond, ";") || strings.ContainsAny(table, " `") {
			t.Errorf("ParseWhere(%q) accepted %q, %q", s, table, cond)
		}
	})
}

// TestJSONColumns: MariaDB shows its JSON as LONGTEXT with a json_valid
// check, on the column or as a constraint of the table; for a target with
// a JSON type the copy creates JSON, and leaves other text alone.
func TestJSONColumns(t *testing.T) {
	create := "CREATE TABLE `docs` (\n" +
		"  `id` int(11) NOT NULL,\n" +
		"  `doc` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL CHECK (json_valid(`doc`)),\n" +
		"  `meta` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL COMMENT 'x',\n" +
		"  `body` longtext DEFAULT NULL,\n" +
		"  PRIMARY KEY (`id`),\n" +
		"  CONSTRAINT `CONSTRAINT_1` CHECK (json_valid(`meta`))\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
	d := splitCreateTable(create, "docs", false, map[string]bool{"doc": true, "meta": true})
	want := "CREATE TABLE `docs` (\n" +
		"  `id` int(11) NOT NULL,\n" +
		"  `doc` json DEFAULT NULL,\n" +
		"  `meta` json NOT NULL COMMENT 'x',\n" +
		"  `body` longtext DEFAULT NULL,\n" +
		"  PRIMARY KEY (`id`)\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4"
	if d.create != want {
		t.Errorf("got\n%s\nwant\n%s", d.create, want)
	}
	if d := splitCreateTable(create, "docs", false, nil); d.create != create {
		t.Errorf("without JSON columns: got\n%s\nwant it unchanged", d.create)
	}
}
