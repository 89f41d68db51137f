package schema

import (
	"database/sql"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	types := []struct{ in, want string }{
		{"int(11)", "int"},
		{"int(10) unsigned", "int unsigned"},
		{"bigint(20) unsigned", "bigint unsigned"},
		{"tinyint(1)", "tinyint"},
		{"year(4)", "year"},
		{"int(6) unsigned zerofill", "int(6) unsigned zerofill"},
		{"varchar(10)", "varchar(10)"},
		{"decimal(10,2)", "decimal(10,2)"},
	}
	for _, tt := range types {
		if got := NormType(tt.in); got != tt.want {
			t.Errorf("NormType(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
	str := func(s string) sql.NullString { return sql.NullString{String: s, Valid: true} }
	defaults := []struct {
		name, flavour string
		def           sql.NullString
		nullable      bool
		extra, want   string
	}{
		{"mariadb null", "mariadb", str("NULL"), true, "", "NULL"},
		{"mysql null", "mysql", sql.NullString{}, true, "", "NULL"},
		{"mariadb none", "mariadb", sql.NullString{}, false, "", ""},
		{"mysql none", "mysql", sql.NullString{}, false, "", ""},
		{"mariadb literal", "mariadb", str("'it''s'"), false, "", "'it''s'"},
		{"mysql literal", "mysql", str("it's"), false, "", "'it''s'"},
		{"mariadb number", "mariadb", str("0"), false, "", "'0'"},
		{"mysql number", "mysql", str("0"), false, "", "'0'"},
		{"mariadb expression", "mariadb", str("current_timestamp()"), false, "", "current_timestamp"},
		{"mysql expression", "mysql", str("CURRENT_TIMESTAMP"), false, "DEFAULT_GENERATED", "current_timestamp"},
		{"mysql precision", "mysql", str("CURRENT_TIMESTAMP(6)"), false, "DEFAULT_GENERATED", "current_timestamp(6)"},
	}
	for _, tt := range defaults {
		if got := normDefault(tt.flavour == "mariadb", tt.def, tt.nullable, tt.extra); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
	for in, want := range map[string]string{"utf8": "utf8mb3", "utf8_general_ci": "utf8mb3_general_ci", "utf8mb4_bin": "utf8mb4_bin", "latin1": "latin1"} {
		if got := NormCharset(in); got != want {
			t.Errorf("NormCharset(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestCompareForeignKeys(t *testing.T) {
	fk := func(name, col, ref, onDelete, onUpdate string) *ForeignKey {
		return &ForeignKey{Name: name, Columns: []string{col}, RefTable: ref, RefColumns: []string{"id"},
			OnDelete: normRule(onDelete), OnUpdate: normRule(onUpdate)}
	}
	tests := []struct {
		name     string
		src, dst []*ForeignKey
		want     []string
	}{
		{"same", []*ForeignKey{fk("f", "a", "p", "CASCADE", "")}, []*ForeignKey{fk("f", "a", "p", "CASCADE", "")}, nil},
		{"NO ACTION is RESTRICT", []*ForeignKey{fk("f", "a", "p", "NO ACTION", "NO ACTION")}, []*ForeignKey{fk("f", "a", "p", "RESTRICT", "RESTRICT")}, nil},
		{"names and columns without case", []*ForeignKey{fk("F", "A", "p", "", "")}, []*ForeignKey{fk("f", "a", "p", "", "")}, nil},
		{"missing", []*ForeignKey{fk("f", "a", "p", "CASCADE", "")}, nil,
			[]string{"foreign key missing on target: f (a) REFERENCES p (id) ON DELETE CASCADE ON UPDATE RESTRICT"}},
		{"extra", nil, []*ForeignKey{fk("f", "a", "p", "", "")},
			[]string{"foreign key extra on target: f (a) REFERENCES p (id) ON DELETE RESTRICT ON UPDATE RESTRICT"}},
		{"rule differs", []*ForeignKey{fk("f", "a", "p", "CASCADE", "")}, []*ForeignKey{fk("f", "a", "p", "SET NULL", "")},
			[]string{"foreign key of f: source (a) REFERENCES p (id) ON DELETE CASCADE ON UPDATE RESTRICT, target (a) REFERENCES p (id) ON DELETE SET NULL ON UPDATE RESTRICT"}},
		{"referenced table differs", []*ForeignKey{fk("f", "a", "p", "", "")}, []*ForeignKey{fk("f", "a", "q", "", "")},
			[]string{"foreign key of f: source (a) REFERENCES p (id) ON DELETE RESTRICT ON UPDATE RESTRICT, target (a) REFERENCES q (id) ON DELETE RESTRICT ON UPDATE RESTRICT"}},
		{"renamed", []*ForeignKey{fk("f", "a", "p", "", "")}, []*ForeignKey{fk("g", "a", "p", "", "")},
			[]string{"foreign key name of (a) REFERENCES p (id) ON DELETE RESTRICT ON UPDATE RESTRICT: source f, target g"}},
		{"unknown on one side", []*ForeignKey{fk("f", "a", "p", "", "")}, nil, nil},
	}
	for _, tt := range tests {
		src, dst := &Table{ForeignKeys: tt.src}, &Table{ForeignKeys: tt.dst}
		if tt.name == "unknown on one side" {
			dst.ForeignKeysUnknown = true
		}
		var got []string
		for _, d := range compareForeignKeys(src, dst) {
			got = append(got, d.String())
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.want)
		}
	}
}
