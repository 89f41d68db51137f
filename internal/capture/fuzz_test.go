package capture

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// checkRecords holds for whatever a reader produced from any input.
func checkRecords(t *testing.T, got []*Record, c *Capturer, lines int64) {
	t.Helper()
	for _, r := range got {
		if r.Session == "" {
			t.Fatalf("record without a session: %+v", r)
		}
		if r.Kind == "" && (r.Seq < 1 || r.SQL == "") {
			t.Fatalf("statement without a sequence number or text: %+v", r)
		}
	}
	if c.Stats.Bad+c.Stats.ValuesLost < int64(len(c.Stats.Problems)) {
		t.Fatalf("bad %d + values lost %d < problems listed %d", c.Stats.Bad, c.Stats.ValuesLost, len(c.Stats.Problems))
	}
	// Every statement, skipped entry and other entry is in its source's
	// figures.
	var stmts, skipped int64
	for _, s := range c.Stats.Sources {
		stmts += s.Statements
		skipped += s.SkippedCount()
		if s.Entries() < s.Statements {
			t.Fatalf("source %s: %d entries < %d statements", s.Name, s.Entries(), s.Statements)
		}
	}
	if stmts != c.Stats.Statements || skipped != c.Stats.Bad {
		t.Fatalf("sources' figures: got %d statements, %d skipped; want %d, %d", stmts, skipped, c.Stats.Statements, c.Stats.Bad)
	}
	for _, p := range c.Stats.Problems {
		if lines >= 0 && (p.Line < 1 || p.Line > lines) {
			t.Fatalf("problem on line %d of %d: %s", p.Line, lines, p)
		}
	}
}

func fuzzLog(t *testing.T, format, text string) {
	var got []*Record
	c := NewCapturer(func(r *Record) error { got = append(got, r); return nil })
	if err := c.Run(context.Background(), []Source{{Name: "f", Format: format, R: strings.NewReader(text)}}); err != nil {
		t.Fatalf("reading must not fail on bad input: %v", err)
	}
	checkRecords(t, got, c, int64(strings.Count(text, "\n")+1))
	if format == "slow" {
		// An entry's header lines never end up inside a statement.
		for _, r := range got {
			for _, h := range []string{"\n# Time:", "\n# User@Host:", "\n# Query_time:"} {
				if strings.Contains(r.SQL, h) {
					t.Fatalf("statement holds a header line %q: %q", h, r.SQL)
				}
			}
		}
	}
}

// addFixtures adds the logs of testdata/logs whose names start with prefix
// to a fuzz target's seeds.
func addFixtures(f *testing.F, prefix string) {
	logs, err := filepath.Glob("testdata/logs/" + prefix + "*.log")
	if err != nil || len(logs) == 0 {
		f.Fatalf("fixtures %s*: got %d, %v", prefix, len(logs), err)
	}
	for _, p := range logs {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(b))
	}
}

func FuzzSlowLog(f *testing.F) {
	f.Add("# Time: 261122 21:56:55\n# User@Host: a[a] @  [127.0.0.1]\n# Thread_id: 4  Schema: s  QC_hit: No\n# Query_time: 0.1  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 1\nuse s;\nSET timestamp=1;\nSELECT 1;\n")
	f.Add("# Time: 2026-11-22T12:00:01.5Z\n# User@Host: a[a] @ localhost []  Id: 8\n# Query_time: 0.5 Lock_time: 0 Rows_sent: 3 Rows_examined: 9 Errno: 2\nSET last_insert_id=5,timestamp=7;\nselect 1;\n# administrator command: Quit;\n")
	f.Add("garbage\n# Query_time: x\n\n")
	addFixtures(f, "slow-")
	f.Fuzz(func(t *testing.T, text string) { fuzzLog(t, "slow", text) })
}

func FuzzGeneralLog(f *testing.F) {
	f.Add("Time\t\t    Id Command\tArgument\n261122 21:56:57\t     5 Connect\ta@h on s using TCP/IP\n\t\t     5 Query\tSELECT 1\n  , 2\n\t\t     5 Query\texecute s\n\t\t     5 Execute\tselect 3\n\t\t     5 Quit\t\n")
	f.Add("2026-11-22T12:00:00.000001Z\t    8 Init DB\tx\n2026-11-22T12:00:00.1Z\t    8 Query\tCREATE USER u IDENTIFIED BY 'p'\n")
	f.Add("261122 21:56:57\tgarbage\n")
	addFixtures(f, "general-")
	f.Fuzz(func(t *testing.T, text string) { fuzzLog(t, "general", text) })
}

// fuzzPackets reads data as a packet capture of format twice: the records
// are sound and the same both times.
func fuzzPackets(t *testing.T, format string, data []byte, port int, lines int64) {
	got, file, c, err := captureBytes(t, data, format, port)
	if err != nil && !errors.Is(err, ErrNoTraffic) && format == "tcpdump-text" {
		t.Fatalf("reading must not fail on bad input: %v", err)
	}
	checkRecords(t, got, c, lines)
	if err == nil && c.Stats.Statements == 0 {
		t.Fatalf("no statement and no error: a silent zero (%s)", &c.Stats.Packets)
	}
	_, again, _, _ := captureBytes(t, data, format, port)
	if !bytes.Equal(file, again) {
		t.Fatalf("two reads of the same input gave different captures")
	}
}

// FuzzPcap reads each input as traffic to 3306 (the synthetic seeds) and
// to the recorded fixtures' port.
func FuzzPcap(f *testing.F) {
	f.Add(writePcap(f, 3306, appSegments()))
	f.Add(writePcap(f, 3306, appSegments()[:5]))
	f.Add(writePcap(f, 3306, attrSeedSegments()))
	port := fixturePort(f)
	for _, name := range []string{"midstream.pcap", "session.pcapng"} {
		b := readFixture(f, name)
		f.Add(b[:min(len(b), 6000)])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzPackets(t, "pcap", data, 3306, -1)
		fuzzPackets(t, "pcap", data, port, -1)
	})
}

func FuzzTcpdumpText(f *testing.F) {
	port := fixturePort(f)
	for _, name := range []string{"session.x.txt", "midstream.xx.txt"} {
		b := readFixture(f, name)
		cut := bytes.LastIndex(b[:min(len(b), 5000)], []byte("\n20"))
		f.Add(string(b[:cut+1]), port)
	}
	f.Add("1764099693.729626 IP 127.0.0.1.35386 > 127.0.0.1.3306: tcp 9\n\t0x0000:  4500 003d 9db1 4000 4006 9f07 7f00 0001  E..=..@.@.......\n\t0x0010:  7f00 0001 8a3a 0cea 575c 53fb 0000 0000\n\t0x0020:  5018 ffff 0000 0000 0500 0000 0353 454c 45\n", 3306)
	f.Add("19:49:17.729626 IP6 ::1.35386 > ::1.3306: tcp 0\n\t0x0000:  6000 0000 0014 0640 0000\n", 3306)
	f.Fuzz(func(t *testing.T, text string, port int) {
		fuzzPackets(t, "tcpdump-text", []byte(text), port, int64(strings.Count(text, "\n")+1))
	})
}

// FuzzProtocol feeds arbitrary bytes to both directions of one MySQL
// connection, cut into segments, as TCP reassembly would.
func FuzzProtocol(f *testing.F) {
	for _, segs := range [][]seg{appSegments(), attrSeedSegments()} {
		var client, server []byte
		for _, s := range segs {
			if s.toServer {
				client = append(client, s.data...)
			} else {
				server = append(server, s.data...)
			}
		}
		f.Add(client, server, uint8(7))
	}
	f.Add([]byte{5, 0, 0, 0, 0x17, 1, 0, 0, 0}, []byte{1, 0, 0, 1, 0xfe}, uint8(1))
	f.Fuzz(func(t *testing.T, client, server []byte, cut uint8) {
		var got []*Record
		c := NewCapturer(func(r *Record) error { got = append(got, r); return nil })
		mc := newMySQLConn(c, "127.0.0.1:1")
		step := int(cut%64) + 1
		now := time.Unix(0, 0)
		for i, j := 0, 0; i < len(client) || j < len(server); {
			if i < len(client) {
				e := min(i+step, len(client))
				if err := mc.feed(true, client[i:e], now); err != nil {
					t.Fatal(err)
				}
				i = e
			}
			if j < len(server) {
				e := min(j+step, len(server))
				if err := mc.feed(false, server[j:e], now); err != nil {
					t.Fatal(err)
				}
				j = e
			}
		}
		if err := mc.close(); err != nil {
			t.Fatal(err)
		}
		checkRecords(t, got, c, -1)
	})
}
