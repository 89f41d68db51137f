// Command followlag is a benchmark aid, not part of shakedown: it measures
// how far behind a source each of several copies of it is (a shakedown
// follower's target, a native replica), the same way for each, while a
// load it starts runs on the source. scripts/bench-follow.sh uses it.
//
// A heartbeat row on the source (TABLE, id 1, ts DATETIME(6)) is set to
// the source's NOW(6) every --every; on each side the row is read every
// --every, and the lag is the time of the reply less the value seen. The
// load is the command after "--"; when it ends the heartbeat stops, one
// last value is written, and each side's catch-up is the time from the
// load's end to the first read that sees that value (read every
// --catchup-every, for at most --catchup-timeout). All the servers are on
// this machine, so one clock serves: every session uses time_zone +00:00.
//
// --reported NAME=follow also reads, each tick, the lag a shakedown
// follower reports (lag_seconds of its saved position on side NAME, as
// its progress line shows it); NAME=slave reads Seconds_Behind_Master.
// --cpu NAME/LABEL=PID reads PID's CPU time (utime+stime) at the load's
// start and when side NAME catches up.
//
//	followlag --source mysql://shakedown@127.0.0.1:3307/sbtest \
//	    --side follower=mysql://shakedown@127.0.0.1:3308/sbtest --reported follower=follow \
//	    --side replica=mysql://shakedown@127.0.0.1:3309/sbtest --reported replica=slave \
//	    --cpu follower/client=4242 --load-log load.log -- bin/shakedown run oltp_write_only ...
//
// It prints, on standard output, a line for the load and one per side of
// key=value fields (seconds; unix times for start, end and caught_at):
//
//	load start=... end=... exit=0 final=...
//	side follower samples=598 p50=0.210 p99=1.480 max=1.720 caught=1 catchup=0.930 caught_at=... reported_p50=... cpu.client=12.34
//
// caught=0 (and catchup=-1) where a side did not see the last value in
// time. The exit status is 1 when the load failed or a side could not be
// read, 2 for bad usage.
package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-sql-driver/mysql"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// multi is a repeatable NAME=VALUE flag, in the order given.
type multi struct{ keys, vals []string }

func (m *multi) String() string { return strings.Join(m.keys, ",") }
func (m *multi) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" || v == "" {
		return fmt.Errorf("want NAME=VALUE, got %q", s)
	}
	m.keys, m.vals = append(m.keys, k), append(m.vals, v)
	return nil
}

type config struct {
	source       string
	table        string
	every        time.Duration
	catchupEvery time.Duration
	catchupFor   time.Duration
	ready        time.Duration
	loadLog      string
	sides        multi
	reported     multi
	cpu          multi
	load         []string
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var c config
	fs := flag.NewFlagSet("followlag", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.source, "source", "", "the source, mysql://user[:password]@host:port/db")
	fs.StringVar(&c.table, "table", "followlag_heartbeat", "the heartbeat table, in the source's database (id INT PRIMARY KEY, ts DATETIME(6)), present on every side")
	fs.DurationVar(&c.every, "every", 100*time.Millisecond, "heartbeat and read interval during the load")
	fs.DurationVar(&c.catchupEvery, "catchup-every", 10*time.Millisecond, "read interval after the load, until each side sees the last heartbeat")
	fs.DurationVar(&c.catchupFor, "catchup-timeout", 10*time.Minute, "the longest wait after the load for a side to catch up")
	fs.DurationVar(&c.ready, "ready-timeout", time.Minute, "the longest wait, before the load, for every side to see a new heartbeat")
	fs.StringVar(&c.loadLog, "load-log", "", "write the load's standard output and error to FILE (default: this program's standard error)")
	fs.Var(&c.sides, "side", "NAME=URL of a copy to measure (repeatable)")
	fs.Var(&c.reported, "reported", "NAME=follow or NAME=slave: also read the lag side NAME reports itself")
	fs.Var(&c.cpu, "cpu", "NAME/LABEL=PID: PID's CPU seconds from the load's start to side NAME's catch-up, printed as cpu.LABEL")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	c.load = fs.Args()
	if err := c.check(); err != nil {
		fmt.Fprintln(stderr, "followlag:", err)
		return 2
	}
	if err := measure(ctx, &c, stdout, stderr); err != nil {
		fmt.Fprintln(stderr, "followlag:", err)
		return 1
	}
	return 0
}

func (c *config) check() error {
	switch {
	case c.source == "":
		return errors.New("--source is required")
	case len(c.sides.keys) == 0:
		return errors.New("--side NAME=URL is required (repeatable)")
	case len(c.load) == 0:
		return errors.New("want the load's command after --")
	case c.every <= 0 || c.catchupEvery <= 0:
		return errors.New("--every and --catchup-every must be above 0")
	}
	for i, k := range c.reported.keys {
		if !slices.Contains(c.sides.keys, k) {
			return fmt.Errorf("--reported %s: no --side %s", k, k)
		}
		if v := c.reported.vals[i]; v != "follow" && v != "slave" {
			return fmt.Errorf("--reported %s=%s: want follow or slave", k, v)
		}
	}
	for i, k := range c.cpu.keys {
		name, _, ok := strings.Cut(k, "/")
		if !ok || !slices.Contains(c.sides.keys, name) {
			return fmt.Errorf("--cpu %s: want NAME/LABEL with NAME a --side", k)
		}
		if _, err := strconv.Atoi(c.cpu.vals[i]); err != nil {
			return fmt.Errorf("--cpu %s=%s: want a process id", k, c.cpu.vals[i])
		}
	}
	return nil
}

// open connects to a mysql:// URL with every session on UTC, so that
// DATETIME values read back as the instants NOW(6) gave.
func open(raw string) (*sql.DB, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "mysql" || u.Host == "" {
		return nil, fmt.Errorf("%q: want mysql://user[:password]@host:port/db", raw)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr = "tcp", u.Host
	cfg.DBName = strings.TrimPrefix(u.Path, "/")
	cfg.Params = map[string]string{"time_zone": "'+00:00'"}
	cfg.Timeout, cfg.ReadTimeout, cfg.WriteTimeout = 5*time.Second, 30*time.Second, 30*time.Second
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// side is one copy being measured. Its fields are written by its reader
// goroutine alone until that goroutine has ended.
type side struct {
	name     string
	db       *sql.DB
	reported string // "", "follow" or "slave"
	cpu      map[string]int

	lags, rep []float64 // during the load
	caught    bool
	caughtAt  time.Time
	cpuAt     map[string]float64 // CPU seconds at the catch-up
	errors    int                // failed reads
	err       error              // the first
}

// clock is what the readers share with the load's runner, under mu.
type clock struct {
	mu    sync.Mutex
	end   time.Time // the load's end; zero until it ends
	final time.Time // the last heartbeat's value; zero until it is written
}

func (k *clock) get() (end, final time.Time) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.end, k.final
}

func measure(ctx context.Context, c *config, stdout, stderr io.Writer) error {
	src, err := open(c.source)
	if err != nil {
		return fmt.Errorf("--source %w", err)
	}
	defer src.Close()
	cmd := exec.CommandContext(ctx, c.load[0], c.load[1:]...)
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if c.loadLog != "" {
		f, err := os.Create(c.loadLog)
		if err != nil {
			return fmt.Errorf("--load-log: %w", err)
		}
		defer f.Close()
		cmd.Stdout, cmd.Stderr = f, f
	}
	q := fmt.Sprintf("UPDATE `%s` SET ts = NOW(6) WHERE id = 1", c.table)
	first, err := writeBeat(ctx, src, q, c.table)
	if err != nil {
		return fmt.Errorf("source: write the heartbeat: %w", err)
	}
	var sides []*side
	for i, name := range c.sides.keys {
		db, err := open(c.sides.vals[i])
		if err != nil {
			return fmt.Errorf("--side %s: %w", name, err)
		}
		defer db.Close()
		s := &side{name: name, db: db, cpu: map[string]int{}, cpuAt: map[string]float64{}}
		for j, k := range c.reported.keys {
			if k == name {
				s.reported = c.reported.vals[j]
			}
		}
		for j, k := range c.cpu.keys {
			if n, label, _ := strings.Cut(k, "/"); n == name {
				s.cpu[label], _ = strconv.Atoi(c.cpu.vals[j])
			}
		}
		sides = append(sides, s)
	}

	// Every side sees the heartbeat just written: its applier runs, and
	// the table is there.
	deadline := time.Now().Add(c.ready)
	for _, s := range sides {
		for {
			v, err := s.beat(ctx, c.table)
			if err == nil && !v.Before(first) {
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("side %s saw no new heartbeat within --ready-timeout %s (last error: %v)", s.name, c.ready, err)
			}
			time.Sleep(c.every)
		}
	}

	var k clock
	bctx, stopBeat := context.WithCancel(ctx)
	var beatErr error
	beatDone := make(chan struct{})
	go func() { // ends when bctx ends
		defer close(beatDone)
		t := time.NewTicker(c.every)
		defer t.Stop()
		for {
			select {
			case <-bctx.Done():
				return
			case <-t.C:
				if _, err := src.ExecContext(bctx, q); err != nil && bctx.Err() == nil && beatErr == nil {
					beatErr = err
				}
			}
		}
	}()

	cpuStart := map[string]float64{}
	for _, s := range sides {
		for label, pid := range s.cpu {
			cpuStart[s.name+"/"+label] = cpuSeconds(pid)
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	rctx, stopRead := context.WithCancel(ctx)
	defer stopRead()
	for _, s := range sides {
		wg.Add(1)
		go func() { // ends at its catch-up, at the timeout, or when rctx ends
			defer wg.Done()
			s.read(rctx, c, &k)
		}()
	}

	loadErr := cmd.Run()
	end := time.Now()
	k.mu.Lock()
	k.end = end
	k.mu.Unlock()
	stopBeat()
	<-beatDone

	// The last heartbeat: its value is what each side must come to see.
	final, err := writeBeat(ctx, src, q, c.table)
	if err != nil {
		stopRead()
		wg.Wait()
		return fmt.Errorf("source: write the last heartbeat: %w", err)
	}
	k.mu.Lock()
	k.final = final
	k.mu.Unlock()
	wg.Wait()

	exit := 0
	if loadErr != nil {
		exit = -1
		if ee, ok := loadErr.(*exec.ExitError); ok {
			exit = ee.ExitCode()
		}
	}
	fmt.Fprintf(stdout, "load start=%s end=%s exit=%d final=%s\n", unix(start), unix(end), exit, unix(final))
	var errs []error
	for _, s := range sides {
		line := fmt.Sprintf("side %s samples=%d", s.name, len(s.lags))
		p50, p99, mx := quantiles(s.lags)
		line += fmt.Sprintf(" p50=%.3f p99=%.3f max=%.3f", p50, p99, mx)
		if s.caught {
			line += fmt.Sprintf(" caught=1 catchup=%.3f caught_at=%s", s.caughtAt.Sub(end).Seconds(), unix(s.caughtAt))
		} else {
			line += " caught=0 catchup=-1 caught_at=-1"
		}
		if s.reported != "" {
			r50, r99, rmx := quantiles(s.rep)
			line += fmt.Sprintf(" reported_samples=%d reported_p50=%.3f reported_p99=%.3f reported_max=%.3f", len(s.rep), r50, r99, rmx)
		}
		labels := make([]string, 0, len(s.cpu))
		for l := range s.cpu {
			labels = append(labels, l)
		}
		sort.Strings(labels)
		for _, l := range labels {
			at, ok := s.cpuAt[l]
			if !ok { // not caught up: to now
				at = cpuSeconds(s.cpu[l])
			}
			line += fmt.Sprintf(" cpu.%s=%.2f", l, at-cpuStart[s.name+"/"+l])
		}
		line += fmt.Sprintf(" read_errors=%d", s.errors)
		fmt.Fprintln(stdout, line)
		if s.err != nil {
			fmt.Fprintf(stderr, "followlag: side %s: %d reads failed, the first: %v\n", s.name, s.errors, s.err)
		}
		if len(s.lags) == 0 {
			errs = append(errs, fmt.Errorf("side %s: no lag read during the load", s.name))
		}
	}
	if beatErr != nil {
		errs = append(errs, fmt.Errorf("source: heartbeat: %w", beatErr))
	}
	if loadErr != nil {
		errs = append(errs, fmt.Errorf("the load (%s): %w", strings.Join(c.load, " "), loadErr))
	}
	return errors.Join(errs...)
}

// read samples the side until it has seen the last heartbeat, or
// --catchup-timeout after the load's end, or ctx ends.
func (s *side) read(ctx context.Context, c *config, k *clock) {
	for {
		end, final := k.get()
		wait := c.every
		if !end.IsZero() {
			wait = c.catchupEvery
			if time.Since(end) > c.catchupFor {
				return
			}
		}
		next := time.Now().Add(wait)
		v, err := s.beat(ctx, c.table)
		now := time.Now()
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.errors++
			if s.err == nil {
				s.err = err
			}
		case !final.IsZero() && !v.Before(final):
			s.caught, s.caughtAt = true, now
			for l, pid := range s.cpu {
				s.cpuAt[l] = cpuSeconds(pid)
			}
			return
		case end.IsZero() || now.Before(end):
			s.lags = append(s.lags, now.Sub(v).Seconds())
			if s.reported != "" {
				if r, err := s.reportedLag(ctx); err == nil {
					s.rep = append(s.rep, r)
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Until(next)):
		}
	}
}

// beat reads the heartbeat's value on the side.
func (s *side) beat(ctx context.Context, table string) (time.Time, error) {
	var v string
	if err := s.db.QueryRowContext(ctx, fmt.Sprintf("SELECT ts FROM `%s` WHERE id = 1", table)).Scan(&v); err != nil {
		return time.Time{}, err
	}
	return parseTime(v)
}

// reportedLag is the lag the side's applier reports: a follower's saved
// lag_seconds, or a replica's Seconds_Behind_Master (an error where it is
// NULL).
func (s *side) reportedLag(ctx context.Context) (float64, error) {
	if s.reported == "follow" {
		var v float64
		err := s.db.QueryRowContext(ctx, "SELECT lag_seconds FROM shakedown_follow.position ORDER BY heartbeat_ms DESC LIMIT 1").Scan(&v)
		return v, err
	}
	rows, err := s.db.QueryContext(ctx, "SHOW SLAVE STATUS")
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return 0, err
	}
	if !rows.Next() {
		return 0, errors.New("SHOW SLAVE STATUS: no row")
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		return 0, err
	}
	for i, col := range cols {
		if col == "Seconds_Behind_Master" && vals[i].Valid {
			return strconv.ParseFloat(vals[i].String, 64)
		}
	}
	return 0, errors.New("SHOW SLAVE STATUS: Seconds_Behind_Master is NULL")
}

// writeBeat runs the heartbeat's UPDATE q and reads back the value it
// wrote, in the same session.
func writeBeat(ctx context.Context, db *sql.DB, q, table string) (time.Time, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return time.Time{}, err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, q); err != nil {
		return time.Time{}, err
	}
	var v string
	if err := conn.QueryRowContext(ctx, fmt.Sprintf("SELECT ts FROM `%s` WHERE id = 1", table)).Scan(&v); err != nil {
		return time.Time{}, err
	}
	return parseTime(v)
}

func parseTime(s string) (time.Time, error) {
	return time.ParseInLocation("2006-01-02 15:04:05.999999", s, time.UTC)
}

// cpuSeconds is PID's user+system CPU time, 0 when it is gone. The kernel
// reports it in USER_HZ ticks, 100 a second on Linux.
func cpuSeconds(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The command name, in parentheses, may hold spaces: count from after it.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (u + st) / 100
}

// quantiles are the nearest-rank p50 and p99 and the maximum, 0s when
// there are no samples.
func quantiles(v []float64) (p50, p99, mx float64) {
	if len(v) == 0 {
		return 0, 0, 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	at := func(q float64) float64 { return v[min(len(v)-1, int(q*float64(len(v))))] }
	return at(0.5), at(0.99), v[len(v)-1]
}

func unix(t time.Time) string {
	if t.IsZero() {
		return "0"
	}
	return strconv.FormatFloat(float64(t.UnixNano())/1e9, 'f', 3, 64)
}
