package target

import (
	"strings"
	"testing"
)

// FuzzParse: no URL makes Parse panic, and a parsed target's display form
// never holds its password.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"mysql://bench:s3cret@10.0.0.1:3307/app",
		"mysql://u@h1,h2:3306,3307/db?tls=true&timeout=5s",
		"mysql://u@/db?socket=/tmp/m.sock",
		"mysql://sp:p@ss/w:rd#1@127.0.0.1/sbtest",
		"mysql://u:p%40ss@[::1]:3306/db?charset=utf8mb4&collation=utf8mb4_bin",
		"mysql://",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		tg, err := Parse(raw)
		if err != nil {
			return
		}
		if len(tg.Password) >= 4 && strings.Contains(tg.Redacted(), ":"+tg.Password+"@") {
			t.Errorf("Redacted %q holds the password", tg.Redacted())
		}
	})
}
