package verify

import (
	"strings"
	"testing"
)

// TestForeignKeyDifferences: the copy lost a foreign key (and its index),
// changed another's ON DELETE and renamed a third; verify names each as
// what it is, not as an index difference alone.
func TestForeignKeyDifferences(t *testing.T) {
	p := newPair(t)
	mustExec(t, p.srcDB,
		"CREATE TABLE parent (id INT PRIMARY KEY)",
		`CREATE TABLE child (id INT PRIMARY KEY, p INT, q INT, r INT,
			CONSTRAINT fk_p FOREIGN KEY (p) REFERENCES parent (id) ON DELETE CASCADE,
			CONSTRAINT fk_q FOREIGN KEY (q) REFERENCES parent (id),
			CONSTRAINT fk_r FOREIGN KEY (r) REFERENCES parent (id) ON UPDATE CASCADE)`,
		"INSERT INTO parent VALUES (1), (2)",
		"INSERT INTO child VALUES (1, 1, 1, 1), (2, 2, 2, 2)")
	p.copyTable(t, "parent")
	p.copyTable(t, "child")
	mustExec(t, p.dstDB,
		"ALTER TABLE child DROP FOREIGN KEY fk_p, DROP INDEX fk_p",
		"ALTER TABLE child DROP FOREIGN KEY fk_q",
		"ALTER TABLE child ADD CONSTRAINT fk_q FOREIGN KEY (q) REFERENCES parent (id) ON DELETE SET NULL",
		"ALTER TABLE child DROP FOREIGN KEY fk_r",
		"ALTER TABLE child ADD CONSTRAINT fk_r2 FOREIGN KEY (r) REFERENCES parent (id) ON UPDATE CASCADE")
	r := p.run(t, Options{})
	tr := table(t, r, "child")
	var got []string
	for _, d := range tr.SchemaDifferences {
		got = append(got, d.String())
	}
	want := []string{
		"index missing on target: fk_p INDEX (p)",
		"foreign key of fk_q: source (q) REFERENCES parent (id) ON DELETE RESTRICT ON UPDATE RESTRICT, target (q) REFERENCES parent (id) ON DELETE SET NULL ON UPDATE RESTRICT",
		"foreign key name of (r) REFERENCES parent (id) ON DELETE RESTRICT ON UPDATE CASCADE: source fk_r, target fk_r2",
		"foreign key missing on target: fk_p (p) REFERENCES parent (id) ON DELETE CASCADE ON UPDATE RESTRICT",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("child: got schema differences\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if tr.Equal || r.Equal || tr.DifferingRows != 0 {
		t.Errorf("child: got equal %v (report %v), %d differing rows; want not equal, 0 rows", tr.Equal, r.Equal, tr.DifferingRows)
	}
	if pt := table(t, r, "parent"); !pt.Equal {
		t.Errorf("parent: got schema differences %v, want none", pt.SchemaDifferences)
	}
}
