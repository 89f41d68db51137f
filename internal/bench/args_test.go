package bench

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/runspec"
)

// TestArgsRoundTrip: the command line Args writes of what ParseArgs read
// is read back to an equal Spec, a sysbench 0.5 line's too.
func TestArgsRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		line string
		want string // the line Args writes
	}{
		{"defaults", "ping", "ping --threads=1 --time=10"},
		{"every kind of option",
			"--threads 16 oltp_read_write --time=60 --tables 4 --table-size=1000 --rate=10.5 --stall --histogram --mysql-host=a,b --mysql-port 3306 --target mysql://u@h:1/db --rand-type=uniform --segment=1/2 --stall-cooldown=90s",
			"oltp_read_write --threads=16 --time=60 --rate=10.5 --histogram=on --stall=default --stall-cooldown=1m30s --rand-type=uniform --segment=1/2 --mysql-host=a,b --mysql-port=3306 --target=mysql://u@h:1/db --tables=4 --table-size=1000"},
		{"a limit of events", "ping --time=0 --events=5 --percentile=99.9 --connect-mode=query --monitor=off", "ping --threads=1 --time=0 --events=5 --percentile=99.9 --connect-mode=query --monitor=off"},
		{"triggers after a space", "ping --stall threads_running>5", "ping --threads=1 --time=10 --stall=threads_running>5"},
		{"a script path", "/usr/share/sysbench/oltp_point_select.lua --tables=2", "oltp_point_select --threads=1 --time=10 --tables=2"},
		{"sysbench 0.5", "--test=/usr/share/sysbench/oltp.lua --oltp-tables-count=4 --oltp-table-size=1000 --oltp-read-only=on --num-threads=8 --max-time=30 --max-requests=0",
			"oltp_read_only --threads=8 --time=30 --db-ps-mode=disable --tables=4 --table-size=1000"},
		{"sysbench 0.5, write only, MyISAM", "--test=oltp.lua --oltp-write-only --mysql-table-engine=myisam --tx-rate=50",
			"oltp_write_only --threads=1 --time=10 --rate=50 --db-ps-mode=disable --mysql-storage-engine=myisam"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, _, err := ParseArgs("run", strings.Fields(tc.line), nil)
			if err != nil {
				t.Fatalf("ParseArgs(%q): %v", tc.line, err)
			}
			args := s.Args()
			if got := strings.Join(args, " "); got != tc.want {
				t.Errorf("Args: got %q, want %q", got, tc.want)
			}
			again, _, err := ParseArgs("run", args, nil)
			if err != nil {
				t.Fatalf("ParseArgs(%q): %v", args, err)
			}
			if !reflect.DeepEqual(again, s) {
				t.Errorf("got %+v from %q, want %+v", again, args, s)
			}
		})
	}
}

// TestNewSetsAPlansOptions: a general option a plan names among the
// workload's lands in its field, after the typed fields, as a later
// option of a line wins; the workload's own stay by name.
func TestNewSetsAPlansOptions(t *testing.T) {
	s := runspec.New("oltp_read_only")
	s.Threads, s.Percentile = 4, 90
	s.Options = []runspec.Option{{Key: "tables", Value: "3"}, {Key: "percentile", Value: "99"}, {Key: "mysql_ignore_errors", Value: "all"}}
	j, err := New("run", s, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := j.Spec()
	if got.Percentile != 99 || got.IgnoreErrors != "all" || got.Threads != 4 {
		t.Errorf("got percentile %g, ignore %q, threads %d; want 99, all and 4", got.Percentile, got.IgnoreErrors, got.Threads)
	}
	if want := []runspec.Option{{Key: "tables", Value: "3"}}; !reflect.DeepEqual(got.Options, want) {
		t.Errorf("options: got %v, want %v", got.Options, want)
	}
	if o := j.Options(); o["tables"] != "3" || o["percentile"] != "99" || o["threads"] != "4" {
		t.Errorf("recorded options: got tables %q percentile %q threads %q, want 3, 99 and 4", o["tables"], o["percentile"], o["threads"])
	}
	if j.rc.Threads != 4 || j.rc.Percentile != 99 || !j.rc.Policy.IgnoreAll {
		t.Errorf("run config: got %+v, want the Spec's values", j.rc)
	}
}

// TestNewBadOption: an option by name is checked as on a command line, and
// said the same way.
func TestNewBadOption(t *testing.T) {
	for _, tc := range []struct {
		name string
		opt  runspec.Option
	}{
		{"unknown", runspec.Option{Key: "tablez", Value: "2"}},
		{"bad value", runspec.Option{Key: "tables", Value: "x"}},
		{"bad general value", runspec.Option{Key: "rate", Value: "fast"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := runspec.New("oltp_read_only")
			s.Options = []runspec.Option{tc.opt}
			_, err := New("run", s, nil)
			_, perr := Parse("run", []string{"oltp_read_only", "--" + tc.opt.Key + "=" + tc.opt.Value}, nil)
			if err == nil || perr == nil || err.Error() != perr.Error() {
				t.Errorf("got %v, want %v, as the command line gives", err, perr)
			}
		})
	}
	if _, err := New("run", runspec.New("oltp_nonsense"), nil); err == nil || !strings.Contains(err.Error(), `unknown workload "oltp_nonsense"`) {
		t.Errorf("got %v, want the workload named unknown", err)
	}
}

// TestNewOwnSequence: every job gets a unique sequence of its own, with
// every other random-number option of its Spec.
func TestNewOwnSequence(t *testing.T) {
	var c randgen.Config
	v := reflect.ValueOf(&c).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch f.Kind() {
		case reflect.String:
			f.SetString("uniform")
		case reflect.Int, reflect.Int64:
			f.SetInt(int64(i + 1))
		case reflect.Float64:
			f.SetFloat(0.5 + float64(i)/100)
		default:
			t.Fatalf("randgen.Config.%s is a %s: teach ownSequence and this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	got := ownSequence(randgen.Defaults(), c)
	g := reflect.ValueOf(got)
	for i := range v.NumField() {
		if v.Type().Field(i).IsExported() && !reflect.DeepEqual(g.Field(i).Interface(), v.Field(i).Interface()) {
			t.Errorf("randgen.Config.%s: got %v, want %v: ownSequence must copy it", v.Type().Field(i).Name, g.Field(i), v.Field(i))
		}
	}
}

// FuzzParseArgs: a command line is outside input. ParseArgs never panics,
// and what it reads, Args writes as a line it reads to the same Spec.
func FuzzParseArgs(f *testing.F) {
	for _, seed := range []string{
		"ping",
		"oltp_read_write --threads 16 --time=60 --tables 4 --stall --mysql-host=a,b --target mysql://u:pw@h:1/db",
		"--test=oltp.lua --oltp-tables-count=4 --oltp-read-only --num-threads=8 --max-time=30",
		"--test=oltp --oltp-test-mode=simple",
		"ping --stall threads_running>5 --stall-cooldown=1h --percentile=NaN --rate=1e-3",
		"sql --file=x.sql --mysql-port=1,2 --rand-seed=-4 --segment=1/4:1/2 --start-at=now",
		"ping -- stray",
		"ping --help",
		"--max-requests=x ping",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		s, _, err := ParseArgs("run", strings.Fields(line), nil)
		if err != nil {
			return
		}
		args := s.Args()
		again, _, err := ParseArgs("run", args, nil)
		if err != nil {
			if errors.Is(err, ErrHelp) {
				t.Fatalf("%q: Args wrote a line asking for help: %q", line, args)
			}
			t.Fatalf("%q: Args wrote %q, which ParseArgs refuses: %v", line, args, err)
		}
		if got, want := strings.Join(again.Args(), "\x00"), strings.Join(args, "\x00"); got != want {
			t.Errorf("%q: got %q from the line Args wrote, want %q", line, again.Args(), args)
		}
	})
}
