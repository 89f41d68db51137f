package capture

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/gopacket/gopacket/pcapgo"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
)

func TestMain(m *testing.M) { os.Exit(sandboxtest.Main(m)) }

// record makes the packet capture fixtures again: go test -run
// TestRecordPcapFixtures -record ./internal/capture/ (needs tcpdump and
// the right to capture on loopback).
var record = flag.Bool("record", false, "record the packet capture fixtures under testdata/pcap again")

// sentStatement is one statement a fixture's application sent while the
// capture ran.
type sentStatement struct {
	Conn     string `json:"conn"`
	SQL      string `json:"sql"`
	Prepared bool   `json:"prepared,omitempty"`
	// Old marks an execution of a statement prepared before the capture
	// began.
	Old bool `json:"old,omitempty"`
}

// app is a fixture's scripted application: what it sends, it notes.
type app struct {
	t    *testing.T
	ctx  context.Context
	sent []sentStatement
	on   bool // the capture is running
}

func (a *app) note(conn, q string, prepared, old bool) {
	if a.on {
		a.sent = append(a.sent, sentStatement{Conn: conn, SQL: q, Prepared: prepared, Old: old})
	}
}

// query runs q on c: as a text query without args, or prepared, executed
// and closed with them.
func (a *app) query(name string, c *sql.Conn, q string, args ...any) {
	a.t.Helper()
	rows, err := c.QueryContext(a.ctx, q, args...)
	if err == nil {
		for rows.Next() {
		}
		err = rows.Close()
	}
	if err != nil && !strings.Contains(q, "nosuch") {
		a.t.Fatalf("%s: %v", q, err)
	}
	a.note(name, q, len(args) > 0, false)
}

// exec runs a statement prepared earlier.
func (a *app) exec(name string, st *sql.Stmt, q string, old bool, args ...any) {
	a.t.Helper()
	rows, err := st.QueryContext(a.ctx, args...)
	if err != nil {
		a.t.Fatalf("%s: %v", q, err)
	}
	for rows.Next() {
	}
	if err := rows.Close(); err != nil {
		a.t.Fatal(err)
	}
	a.note(name, q, true, old)
}

func TestRecordPcapFixtures(t *testing.T) {
	if !*record {
		t.Skip("records the fixtures only with -record")
	}
	inst := sandboxtest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr = inst.User, "tcp", fmt.Sprintf("127.0.0.1:%d", inst.Port)
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		"CREATE DATABASE IF NOT EXISTS shop", "CREATE DATABASE IF NOT EXISTS stock",
		"CREATE TABLE IF NOT EXISTS shop.items (id INT PRIMARY KEY, name VARCHAR(64), price DECIMAL(10,2))",
		"CREATE TABLE IF NOT EXISTS shop.notes (id INT AUTO_INCREMENT PRIMARY KEY, note TEXT)",
		"CREATE TABLE IF NOT EXISTS stock.levels (item INT PRIMARY KEY, qty INT)",
		"INSERT IGNORE INTO shop.items SELECT seq, CONCAT('item ', seq), seq * 1.25 FROM shop.seq_1_to_300",
		"INSERT IGNORE INTO stock.levels SELECT seq, seq % 17 FROM shop.seq_1_to_300",
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	cfg.DBName = "shop"
	shop, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		t.Fatal(err)
	}
	defer shop.Close()
	shop.SetMaxIdleConns(0) // a connection closed is closed on the wire
	dir := filepath.Join("testdata", "pcap")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	// session: the capture sees every connection from its start.
	a := &app{t: t, ctx: ctx}
	stop := startTcpdump(t, "lo", inst.Port, filepath.Join(dir, "session.pcap"))
	a.on = true
	ca, cb := conn(t, ctx, shop), conn(t, ctx, shop)
	byID := "SELECT name, price FROM items WHERE id = ?"
	st, err := ca.PrepareContext(ctx, byID)
	if err != nil {
		t.Fatal(err)
	}
	a.query("a", ca, "SELECT COUNT(*) FROM items")
	for i := 1; i <= 6; i++ {
		a.exec("a", st, byID, false, i*7)
		a.query("b", cb, fmt.Sprintf("SELECT id, name FROM items WHERE price > %d ORDER BY id LIMIT 3", i*10))
		a.query("a", ca, "UPDATE items SET price = price + ? WHERE id = ?", 1, i)
		a.query("b", cb, "INSERT INTO notes (note) VALUES (?)", fmt.Sprintf("note %d", i))
	}
	a.query("a", ca, "SELECT id, name, price FROM items ORDER BY id") // 300 rows
	a.query("a", ca, "SELECT * FROM nosuch")
	a.query("b", cb, "USE stock")
	a.query("b", cb, "SELECT item, qty FROM levels WHERE qty = ?", 3)
	a.query("a", ca, "INSERT INTO notes (note) VALUES ('"+strings.Repeat("long text ", 300)+"')")
	for i := 7; i <= 12; i++ {
		a.exec("a", st, byID, false, i*7)
		a.query("a", ca, "SELECT name FROM items WHERE id IN (?, ?)", i, i+1)
	}
	st.Close()
	ca.Close()
	cb.Close()
	a.on = false
	stop()
	writeSent(t, filepath.Join(dir, "session.json"), a.sent)

	// midstream: the connections were open, and a statement prepared,
	// before the capture began; it runs on "any" (Linux cooked headers).
	a = &app{t: t, ctx: ctx}
	cc, cd := conn(t, ctx, shop), conn(t, ctx, shop)
	old, err := cc.PrepareContext(ctx, byID)
	if err != nil {
		t.Fatal(err)
	}
	a.exec("c", old, byID, true, 1)
	a.query("d", cd, "SELECT COUNT(*) FROM notes")
	stop = startTcpdump(t, "any", inst.Port, filepath.Join(dir, "midstream.pcap"))
	a.on = true
	for i := 1; i <= 8; i++ {
		a.exec("c", old, byID, true, i*3)
		a.query("d", cd, fmt.Sprintf("SELECT id FROM items WHERE name = 'item %d'", i))
		a.query("c", cc, "SELECT name FROM items WHERE id BETWEEN ? AND ?", i, i+5)
		a.query("d", cd, "UPDATE items SET name = ? WHERE id = ?", fmt.Sprintf("item %d", i), i)
		a.query("c", cc, fmt.Sprintf("SELECT SUM(price) FROM items WHERE id < %d", i*20))
	}
	ce := conn(t, ctx, shop)
	for i := 1; i <= 4; i++ {
		a.query("e", ce, byID, i)
		a.query("e", ce, "SELECT @@version_comment")
	}
	ce.Close()
	a.on = false
	stop()
	old.Close()
	cc.Close()
	cd.Close()
	writeSent(t, filepath.Join(dir, "midstream.json"), a.sent)

	if err := os.WriteFile(filepath.Join(dir, "port"), []byte(fmt.Sprintln(inst.Port)), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"session", "midstream"} {
		pcap := filepath.Join(dir, name+".pcap")
		// tcpdump may stop before it wrote every packet: a recording that
		// lacks statements is made again.
		_, _, c, err := captureBytes(t, readFixture(t, name+".pcap"), "pcap", inst.Port)
		if err != nil {
			t.Fatal(err)
		}
		if want := int64(len(readSent(t, name))) - c.Stats.Packets.Skipped[skipPreparedOld]; c.Stats.Statements != want {
			t.Fatalf("%s: got %d statements, want %d: record again", pcap, c.Stats.Statements, want)
		}
		toPcapng(t, pcap, filepath.Join(dir, name+".pcapng"))
		for _, x := range []string{"x", "xx"} {
			out, err := exec.Command("tcpdump", "-r", pcap, "-"+x, "-nn", "-q", "-tttt").Output()
			if err != nil {
				t.Fatalf("tcpdump -r %s -%s: %v", pcap, x, err)
			}
			if err := os.WriteFile(filepath.Join(dir, name+"."+x+".txt"), out, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func conn(t *testing.T, ctx context.Context, db *sql.DB) *sql.Conn {
	t.Helper()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

func writeSent(t *testing.T, path string, sent []sentStatement) {
	t.Helper()
	var b bytes.Buffer
	for _, s := range sent {
		line, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// toPcapng writes a pcap's packets again as pcapng.
func toPcapng(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	r, err := pcapgo.NewReader(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.Create(to)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	w, err := pcapgo.NewNgWriter(out, r.LinkType())
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		ci.InterfaceIndex = 0
		if err := w.WritePacket(ci, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// startTcpdump captures the traffic of port on iface into path until the
// returned stop is called.
func startTcpdump(t *testing.T, iface string, port int, path string) func() {
	t.Helper()
	cmd := exec.Command("tcpdump", "-i", iface, "--immediate-mode", "-U", "-s", "0", "-w", path, fmt.Sprintf("tcp port %d", port))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start tcpdump: %v", err)
	}
	listening := make(chan bool, 1)
	ended := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		var all []string
		for sc.Scan() {
			all = append(all, sc.Text())
			if strings.Contains(sc.Text(), "listening on") {
				listening <- true
			}
		}
		close(listening)
		ended <- strings.Join(all, "\n")
	}()
	select {
	case ok := <-listening:
		if !ok {
			t.Fatal("tcpdump ended before it listened")
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("tcpdump did not start listening within 20s")
	}
	return func() {
		// Let the packets still in the kernel's buffer be written.
		last, stable := int64(-1), 0
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline) && stable < 3; {
			time.Sleep(100 * time.Millisecond)
			if fi, err := os.Stat(path); err == nil && fi.Size() == last {
				stable++
			} else if err == nil {
				last, stable = fi.Size(), 0
			}
		}
		cmd.Process.Signal(syscall.SIGINT)
		if err := cmd.Wait(); err != nil {
			t.Logf("tcpdump: %v", err)
		}
		t.Logf("tcpdump: %s", <-ended)
	}
}
