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

// FuzzOptionFile: no option file text makes the reader panic, the include
// lines it takes out keep the line count, and every option read belongs to
// a [group].
func FuzzOptionFile(f *testing.F) {
	for _, s := range []string{
		"[client]\nuser=bench\npassword=\"s3 cr#et\" # comment\n",
		"[mysql]\npassword\n!include other.cnf\n!includedir conf.d\n[client]\nhost = 127.0.0.1\n",
		"password=outside\n[client-server]\nport=3307\nskip-ssl\n",
		"[client]\npassword='a\\'b\\\\c'\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		text, _ := splitIncludes(data, t.TempDir())
		if got, want := strings.Count(string(text), "\n"), strings.Count(string(data), "\n"); got != want {
			t.Fatalf("include lines taken out changed the line count: %d, want %d", got, want)
		}
		opts, err := parseOptions("fuzz.cnf", text)
		if err != nil {
			return
		}
		for _, o := range opts {
			if o.group == "" {
				t.Errorf("option %q read outside any [group]", o.key)
			}
		}
	})
}

// FuzzLoginFile: no login path file makes its decoder panic.
func FuzzLoginFile(f *testing.F) {
	f.Add(make([]byte, 24))
	f.Add(append(make([]byte, 24), 16, 0, 0, 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = decodeLoginFile(data)
	})
}
