package slap

import (
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/usage"
)

// FuzzOptions feeds the mysqlslap command line any words (one a line):
// parsing and loading must never panic, and whatever is wrong with the
// words is bad usage (exit 2), never a tool failure. Nothing connects.
func FuzzOptions(f *testing.F) {
	seeds := []string{
		"-ubench\n-pSECRET\n-P3307\n-h10.0.0.1\n-c16,64\n-i2\n--query=select 1",
		"--auto-generate-sql\n--auto-generate-sql-load-type=key\n--auto-generate-sql-add-autoincrement\n--number-of-queries=100",
		"--concurrency=0\n--query=select 1",
		"--skip-drop-schema\n--loose-frobnicate\n5\n--create_schema=test\n--query=select 1;select 2\n--delimiter=;",
		"--engine=innodb:key_block_size=8,memory\n--create=create table t (a int)\n--query=insert into t values (1)",
		"-p\nstray",
		"--ignore-errors=1213,x\n--query=select 1",
		"--target=mysql://u:p@h:1/db\n--host=other\n--query=select 1",
		"--number-char-cols=3:1\n--number-int-cols=x\n--auto-generate-sql",
		"--query=/no/such/file.sql",
		"-?",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	getenv := func(string) string { return "" }
	f.Fuzz(func(t *testing.T, line string) {
		args := strings.Split(line, "\n")
		o := &Options{}
		if err := o.Parse(args); err != nil {
			return // cli reports it as bad usage
		}
		if _, err := Load(o, getenv); err != nil && !usage.Is(err) {
			t.Errorf("%q: got %v (%T), want a usage error", args, err, err)
		}
	})
}
