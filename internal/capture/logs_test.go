package capture

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

// readLog captures one log given as text.
func readLog(t *testing.T, format, text string) ([]*Record, *Capturer) {
	t.Helper()
	var got []*Record
	c := NewCapturer(func(r *Record) error { got = append(got, r); return nil })
	if err := c.Run(context.Background(), []Source{{Name: "x.log", Format: format, R: strings.NewReader(text)}}); err != nil {
		t.Fatal(err)
	}
	return got, c
}

// brief is a record in one line, for comparisons.
func brief(r *Record) string {
	if r.Kind != "" {
		return r.Session + " " + r.Kind
	}
	s := r.Session + " #" + itoa(r.Seq) + " [" + r.DB + "] " + r.SQL
	if r.DurationUS != nil {
		s += " dur=" + itoa(*r.DurationUS)
	}
	if r.RowsSent != nil {
		s += " sent=" + itoa(*r.RowsSent)
		if r.RowsExamined != nil { // TiDB writes rows sent alone
			s += " exam=" + itoa(*r.RowsExamined)
		}
	}
	if r.Error != 0 {
		s += " err=" + itoa(int64(r.Error))
	}
	if r.TS != 0 {
		s += " ts=" + itoa(r.TS)
	}
	return s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestSlowLog(t *testing.T) {
	tests := []struct {
		name     string
		log      string
		want     []string
		problems []string
		skipped  int64
	}{
		{"mariadb", `/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:
Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock
Time		    Id Command	Argument
# Time: 261122 21:56:55
# User@Host: app[app] @  [127.0.0.1]
# Thread_id: 4  Schema: shop  QC_hit: No
# Query_time: 0.000517  Lock_time: 0.000000  Rows_sent: 1  Rows_examined: 20
# Rows_affected: 0  Bytes_sent: 160
use ` + "`shop`" + `;
SET timestamp=1795384615;
SELECT name
  FROM t WHERE id = 1;
# User@Host: app[app] @  [127.0.0.1]
# Thread_id: 5  Schema: shop  QC_hit: No
# Query_time: 0.027797  Lock_time: 0.000183  Rows_sent: 0  Rows_examined: 0
SET timestamp=1795384617;
CREATE USER u IDENTIFIED BY 'pw1';
# User@Host: app[app] @  [127.0.0.1]
# Thread_id: 4  Schema: shop  QC_hit: No
# Query_time: 0.000010  Lock_time: 0.000000  Rows_sent: 0  Rows_examined: 0
SET timestamp=1795384618;
# administrator command: Quit;
`, []string{
			"4 #1 [shop] SELECT name\n  FROM t WHERE id = 1 dur=517 sent=1 exam=20 ts=1795384615000000",
			"5 #1 [shop] CREATE USER u IDENTIFIED BY '<redacted>' dur=27797 sent=0 exam=0 ts=1795384617000000",
			"4 quit",
		}, nil, 0},
		{"mysql", `# Time: 2026-11-22T12:00:01.500000Z
# User@Host: app[app] @ localhost []  Id:     8
# Query_time: 0.500000  Lock_time: 0.000000 Rows_sent: 3  Rows_examined: 9
use shop;
SET timestamp=1795435201;
select 1;
# Time: 2026-11-22T12:00:02.000000Z
# User@Host: app[app] @ localhost []  Id:     8
# Query_time: 0.001000  Lock_time: 0.000000 Rows_sent: 0  Rows_examined: 0 Errno: 1146
SET last_insert_id=5,insert_id=6,timestamp=1795435202;
select * from nosuch;
`, []string{
			"8 #1 [shop] select 1 dur=500000 sent=3 exam=9 ts=1795435201000000",
			"8 #2 [shop] select * from nosuch dur=1000 sent=0 exam=0 err=1146 ts=1795435202000000",
		}, nil, 0},
		{"garbled and truncated", `garbage before any entry
# Time: 261122 21:56:55
# User@Host: app[app] @  [127.0.0.1]
# Thread_id: 4  Schema: shop  QC_hit: No
# Query_time: zero  Lock_time: 0.000000  Rows_sent: 1  Rows_examined: 1
SELECT 1;
# User@Host: app[app] @  [127.0.0.1]
# Thread_id: 4  Schema: shop  QC_hit: No
# Query_time: 0.000100  Lock_time: 0.000000  Rows_sent: 1  Rows_examined: 1
SELECT 2;
# User@Host: app[app] @  [127.0.0.1]
# Thread_id: 4  Schema: shop  QC_hit: No
`, []string{"4 #1 [shop] SELECT 1 sent=1 exam=1", "4 #2 [shop] SELECT 2 dur=100 sent=1 exam=1"}, []string{
			"x.log:1: line not part of a slow log entry (no # Time:, # User@Host: or # Query_time: before it)",
			`x.log:5: unreadable Query_time "zero": value dropped, statement kept`,
			"x.log:11: entry without a statement (truncated?)",
		}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, c := readLog(t, "slow", tc.log)
			var g []string
			for _, r := range got {
				g = append(g, brief(r))
			}
			if strings.Join(g, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tc.want, "\n"))
			}
			var p []string
			for _, pr := range c.Stats.Problems {
				p = append(p, pr.String())
			}
			if strings.Join(p, "\n") != strings.Join(tc.problems, "\n") || c.Stats.Bad != tc.skipped {
				t.Errorf("problems: got %d\n%s\nwant\n%s", c.Stats.Bad, strings.Join(p, "\n"), strings.Join(tc.problems, "\n"))
			}
		})
	}
}

func TestGeneralLog(t *testing.T) {
	tests := []struct {
		name     string
		log      string
		want     []string
		problems []string
	}{
		{"mariadb", "/usr/sbin/mariadbd, Version: 10.11.19-MariaDB-0+deb12u1-log (Debian 12). started with:\n" +
			"Tcp port: 3306  Unix socket: /run/mysqld/mysqld.sock\n" +
			"Time\t\t    Id Command\tArgument\n" +
			"261122 21:56:57\t     5 Connect\tapp@127.0.0.1 on shop using TCP/IP\n" +
			"\t\t     5 Query\tSELECT a,\n  b FROM t\n" +
			"\t\t     6 Connect\tapp@127.0.0.1 on  using TCP/IP\n" +
			"\t\t     5 Prepare\tselect v from t where id=?\n" +
			"\t\t     5 Execute\tselect v from t where id=2\n" +
			"261122 21:56:58\t     6 Init DB\tother\n" +
			"\t\t     6 Query\tSET PASSWORD FOR u = PASSWORD('pw2')\n" +
			"\t\t     5 Query\texecute s using @x\n" +
			"\t\t     5 Execute\tselect v from t where id=3\n" +
			"\t\t     5 Quit\t\n",
			[]string{
				"5 #1 [shop] SELECT a,\n  b FROM t ts=1795384617000000",
				"5 #2 [shop] select v from t where id=2 ts=1795384617000000",
				"6 #1 [other] SET PASSWORD FOR u = PASSWORD('<redacted>') ts=1795384618000000",
				"5 #3 [shop] select v from t where id=3 ts=1795384618000000",
				"5 quit",
			}, nil},
		{"mysql", "2026-11-22T12:00:00.000001Z\t    8 Connect\tapp@localhost on shop using Socket\n" +
			"2026-11-22T12:00:00.000100Z\t    8 Query\tselect 1\n" +
			"2026-11-22T12:00:00.000200Z\t    8 Quit\t\n",
			[]string{"8 #1 [shop] select 1 ts=1795348800000100", "8 quit"}, nil},
		{"garbled", "this is not a log\n" +
			"261122 21:56:57\tgarbage\n" +
			"261122 21:56:57\t     5 Query\tSELECT 1\n",
			[]string{"5 #1 [] SELECT 1 ts=1795384617000000"},
			[]string{"x.log:1: line not part of a general log entry", "x.log:2: unreadable general log entry (want TIME<tab>ID COMMAND<tab>ARGUMENT)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, c := readLog(t, "general", tc.log)
			var g []string
			for _, r := range got {
				g = append(g, brief(r))
			}
			if strings.Join(g, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(g, "\n"), strings.Join(tc.want, "\n"))
			}
			var p []string
			for _, pr := range c.Stats.Problems {
				p = append(p, pr.String())
			}
			if strings.Join(p, "\n") != strings.Join(tc.problems, "\n") {
				t.Errorf("problems: got\n%s\nwant\n%s", strings.Join(p, "\n"), strings.Join(tc.problems, "\n"))
			}
		})
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name, head, want string
	}{
		{"pcap", "\xd4\xc3\xb2\xa1\x02\x00", "pcap"},
		{"pcapng", "\x0a\x0d\x0d\x0a\x00", "pcap"},
		{"slow", "# Time: 261122 21:56:55\n# User@Host: a[a] @ [1]\n", "slow"},
		{"general", "261122 21:56:57\t     5 Query\tSELECT 1\n", "general"},
		{"general header and entry", "Time\t\t    Id Command\tArgument\n261122 21:56:57\t     5 Query\tSELECT 1\n", "general"},
		// The slow and the general log share their header: a log of only
		// headers has no entry to tell them apart, and is read as slow.
		{"header alone", "Time\t\t    Id Command\tArgument\n", "slow"},
		{"windows headers alone", "C:\\mysql\\bin\\mysqld.exe, Version: 5.7.44 (MySQL Community Server (GPL)). started with:\r\nTCP Port: 3306, Named Pipe: MySQL\r\nTime                 Id Command    Argument\r\n", "slow"},
		{"header and junk", "Time\t\t    Id Command\tArgument\nnot a log\n", "general"},
		{"general mysql 5.0", "101010  9:10:10\t      1 Query       SELECT 1\n", "general"},
		{"general tabs become spaces", "2023-11-22T12:00:00.000200Z         8 Query     select 1\n", "general"},
		{"slow from Query_time", "# Query_time: 0.1  Lock_time: 0.0 Rows_sent: 1  Rows_examined: 1\nSELECT 1;\n", "slow"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Detect([]byte(tc.head))
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
	_, err := Detect([]byte("id,name\n1,bob\n"))
	if !errors.Is(err, ErrUnknownFormat) || !strings.Contains(err.Error(), "slow, general, pcap") {
		t.Errorf("unknown: got %v, want ErrUnknownFormat listing slow, general, pcap", err)
	}
}

// TestParseUTCTime checks the quick reading of ISO times against
// time.Parse.
func TestParseUTCTime(t *testing.T) {
	for _, s := range []string{
		"2023-11-22T12:00:00.123456Z", "2023-11-22T12:00:00Z", "2023-11-22T12:00:00.5Z", "2024-02-29T23:59:59.000001Z",
		"1970-01-01T00:00:00Z", "2023-02-31T00:00:00Z", "2023-11-22T12:00:00.1234567Z", "2023-11-22T25:00:00Z",
		"2023-11-22T12:00:00.Z", "2023-11-22T12:00:00.12a456Z", "2023-11-22T12:00:00.123456+01:00",
	} {
		want, wantOK := int64(0), false
		if tm, err := time.Parse(time.RFC3339Nano, s); err == nil {
			want, wantOK = tm.UnixMicro(), true
		}
		got, ok := parseISOTime(s)
		if ok != wantOK || got != want {
			t.Errorf("%s: got %d, %v; want %d, %v", s, got, ok, want, wantOK)
		}
	}
}
