package sbflag

import (
	"testing"
	"time"
)

func TestExplain(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"typo in a long option", []string{"--thread=4"}, "--thread: unknown option (did you mean --threads?)"},
		{"typo spelled with _", []string{"--table_sise=4"}, "--table-sise: unknown option (did you mean --table-size?)"},
		{"nothing close", []string{"--frobnicate"}, "--frobnicate: unknown option; shakedown t --help lists them"},
		{"one dash", []string{"-threads=4"}, "-threads: unknown option; long options take two dashes (did you mean --threads?)"},
		{"not a whole number", []string{"--time=abc"}, `--time: "abc" is not a whole number`},
		{"out of range", []string{"--time=99999999999999999999"}, `--time: "99999999999999999999" is out of range`},
		{"not a number", []string{"--rate=fast"}, `--rate: "fast" is not a number`},
		{"duration without a unit", []string{"--interval=5"}, `--interval: "5" needs a unit: 5s, 5ms, 5m`},
		{"not a duration", []string{"--interval=soon"}, `--interval: "soon" is not a duration such as 10s, 500ms or 2m`},
		{"on|off", []string{"--monitor=maybe"}, `--monitor: "maybe" is not a boolean: use on or off`},
		{"list of ints", []string{"--levels=1,x"}, `--levels: "x" is not a whole number`},
		{"needs a value", []string{"--time"}, "--time: needs a value (--time=VALUE)"},
		{"-o where files have their options", []string{"-o", "x.html"}, "-o: unknown option (files are written with --json FILE or --html FILE)"},
		{"--format where files have their options", []string{"--format", "html"}, "--format: unknown option (files are written with --json FILE or --html FILE)"},
		{"--output where files have their options", []string{"--output=x.html"}, "--output: unknown option (files are written with --json FILE or --html FILE)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fs := NewFlagSet("t")
			var (
				n, size    int
				rate       float64
				d          time.Duration
				on         bool
				levels     Ints
				json, html string
			)
			fs.IntVar(&n, "threads", 1, "")
			fs.IntVar(&n, "time", 1, "")
			fs.IntVar(&size, "table-size", 1, "")
			fs.Float64Var(&rate, "rate", 0, "")
			fs.DurationVar(&d, "interval", time.Second, "")
			BoolVar(fs, &on, "monitor", true, "")
			fs.Var(&levels, "levels", "")
			fs.StringVar(&json, "json", "", "")
			fs.StringVar(&html, "html", "", "")
			err := fs.Parse(tc.args)
			if err == nil {
				t.Fatalf("%v: got no error", tc.args)
			}
			if got := Explain(fs, err, "shakedown t --help"); got != tc.want {
				t.Errorf("%v: got %q, want %q", tc.args, got, tc.want)
			}
		})
	}
}
