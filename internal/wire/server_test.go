package wire

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

// Against MariaDB: what the fake server cannot vouch for.

// sharedTarget is the shared sandbox as a target.
func sharedTarget(t *testing.T) *target.Target {
	t.Helper()
	tg, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

// reader is a database/sql pool on the shared sandbox, to read back what
// wire wrote through another client.
func reader(t *testing.T) *sql.DB {
	t.Helper()
	tg := sharedTarget(t)
	db, err := tg.Open(tg.Endpoints()[0], 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

type level int16 // a named type of a basic kind

type celsius struct{ v float64 } // a driver.Valuer of its own

func (c celsius) Value() (driver.Value, error) { return c.v, nil }

func TestArgumentsRoundTrip(t *testing.T) {
	c := dial(t)
	db := reader(t)
	mustQuery(t, c, "DROP TABLE IF EXISTS wire_args")
	mustQuery(t, c, `CREATE TABLE wire_args (id INT PRIMARY KEY, b BOOL, i8 TINYINT, i16 SMALLINT, i32 INT,
		i64 BIGINT, u8 TINYINT UNSIGNED, u16 SMALLINT UNSIGNED, u32 INT UNSIGNED, u64 BIGINT UNSIGNED,
		f32 FLOAT, f64 DOUBLE, s VARCHAR(100), bn VARBINARY(100), dt DATETIME(6))`)
	five := 5
	when := time.Date(2024, 2, 29, 13, 14, 15, 123456789, time.UTC)
	paris := time.FixedZone("UTC+1", 3600)
	var nilInt *int
	var nilTime *time.Time
	cases := []struct {
		name string
		col  string
		arg  any
		want string // as the server shows it; "NULL" for NULL
	}{
		{"bool true", "b", true, "1"},
		{"bool false", "b", false, "0"},
		{"int8", "i8", int8(-128), "-128"},
		{"int16", "i16", int16(-32768), "-32768"},
		{"int32", "i32", int32(math.MinInt32), "-2147483648"},
		{"int64", "i64", int64(math.MinInt64), "-9223372036854775808"},
		{"int", "i64", math.MaxInt, "9223372036854775807"},
		{"uint8", "u8", uint8(255), "255"},
		{"uint16", "u16", uint16(65535), "65535"},
		{"uint32", "u32", uint32(math.MaxUint32), "4294967295"},
		{"uint64", "u64", uint64(math.MaxUint64), "18446744073709551615"},
		{"uint", "u64", uint(1 << 63), "9223372036854775808"},
		{"float32", "f32", float32(1.5), "1.5"},
		{"float64", "f64", 0.1, "0.1"},
		{"string", "s", "it's a \\ \"test\"\n", "it's a \\ \"test\"\n"},
		{"bytes", "bn", []byte{0, 1, 0xff, '\''}, "\x00\x01\xff'"},
		{"time with microseconds", "dt", when, "2024-02-29 13:14:15.123456"},
		{"time in another zone", "dt", time.Date(2024, 1, 1, 1, 0, 0, 0, paris), "2024-01-01 00:00:00.000000"},
		{"time, date only", "dt", time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC), "2024-03-01 00:00:00.000000"},
		{"pointer", "i32", &five, "5"},
		{"named type", "i16", level(3), "3"},
		{"valuer", "f64", celsius{21.5}, "21.5"},
		{"sql.NullInt64", "i64", sql.NullInt64{Int64: 7, Valid: true}, "7"},
		{"sql.NullString", "s", sql.NullString{String: "x", Valid: true}, "x"},
		{"sql.NullTime", "dt", sql.NullTime{Time: when, Valid: true}, "2024-02-29 13:14:15.123456"},
		{"sql.NullBool", "b", sql.NullBool{Bool: true, Valid: true}, "1"},
		{"sql.NullByte", "u8", sql.NullByte{Byte: 200, Valid: true}, "200"},
		{"sql.Null generic", "i32", sql.Null[int32]{V: -3, Valid: true}, "-3"},
	}
	// NULL of every type.
	nulls := []struct {
		name string
		col  string
		arg  any
	}{
		{"nil", "s", nil}, {"nil []byte", "bn", []byte(nil)}, {"nil *int", "i32", nilInt}, {"nil *time.Time", "dt", nilTime},
		{"sql.NullInt64", "i64", sql.NullInt64{}}, {"sql.NullInt32", "i32", sql.NullInt32{}}, {"sql.NullInt16", "i16", sql.NullInt16{}},
		{"sql.NullByte", "u8", sql.NullByte{}}, {"sql.NullFloat64", "f64", sql.NullFloat64{}}, {"sql.NullBool", "b", sql.NullBool{}},
		{"sql.NullString", "s", sql.NullString{}}, {"sql.NullTime", "dt", sql.NullTime{}}, {"sql.Null generic", "u64", sql.Null[uint64]{}},
	}
	for _, n := range nulls {
		cases = append(cases, struct {
			name string
			col  string
			arg  any
			want string
		}{"NULL " + n.name, n.col, n.arg, "NULL"})
	}
	for _, mode := range []string{"prepared", "text"} {
		for i, tc := range cases {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				id := i + 1
				if mode == "text" {
					id += 1000
				}
				q := fmt.Sprintf("INSERT INTO wire_args (id, %s) VALUES (?, ?)", tc.col)
				var err error
				if mode == "prepared" {
					var st *Stmt
					if st, err = c.Prepare(q); err == nil {
						_, err = st.Exec(id, tc.arg)
						st.Close()
					}
				} else {
					var b []byte
					if b, err = c.Interpolate(nil, q, []any{id, tc.arg}); err == nil {
						_, err = c.Query(string(b))
					}
				}
				if err != nil {
					t.Fatalf("insert: %v", err)
				}
				var got sql.NullString
				if err := db.QueryRow(fmt.Sprintf("SELECT %s FROM wire_args WHERE id = ?", tc.col), id).Scan(&got); err != nil {
					t.Fatal(err)
				}
				g := "NULL"
				if got.Valid {
					g = got.String
				}
				if g != tc.want {
					t.Errorf("got %q, want %q", g, tc.want)
				}
			})
		}
	}
	if _, err := c.Interpolate(nil, "SELECT ?", []any{struct{}{}}); err == nil {
		t.Error("a struct argument: got nil error")
	}
}

func TestNoBackslashEscapes(t *testing.T) {
	c := dial(t)
	db := reader(t)
	mustQuery(t, c, "DROP TABLE IF EXISTS wire_esc")
	mustQuery(t, c, "CREATE TABLE wire_esc (id INT PRIMARY KEY, s VARBINARY(200))")
	tricky := "a'b\\'c\\\\\"d\x00e\n\\"
	for i, mode := range []string{"", "NO_BACKSLASH_ESCAPES", "ANSI_QUOTES,NO_BACKSLASH_ESCAPES"} {
		t.Run("sql_mode="+mode, func(t *testing.T) {
			mustQuery(t, c, "SET SESSION sql_mode = '"+mode+"'")
			if got, want := c.NoBackslashEscapes(), strings.Contains(mode, "NO_BACKSLASH"); got != want {
				t.Fatalf("NoBackslashEscapes: got %v, want %v", got, want)
			}
			b, err := c.Interpolate(nil, "INSERT INTO wire_esc VALUES (?, ?) /* it's? */ -- what?", []any{i, tricky})
			if err != nil {
				t.Fatal(err)
			}
			mustQuery(t, c, string(b))
			var got []byte
			if err := db.QueryRow("SELECT s FROM wire_esc WHERE id = ?", i).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if string(got) != tricky {
				t.Errorf("got %q, want %q", got, tricky)
			}
		})
	}
	mustQuery(t, c, "SET SESSION sql_mode = DEFAULT")
}

func TestPlaceholdersInComments(t *testing.T) {
	c := dial(t)
	for _, tc := range []struct {
		query string
		args  []any
	}{
		{"SELECT /* why? */ ?", []any{1}},
		{"SELECT ? -- and why?\n", []any{1}},
		{"SELECT ? # why?", []any{1}},
		{"SELECT '?', \"?\", ? AS `?`", []any{1}},
		// An executable comment's text runs: its placeholder is one.
		{"SELECT /*!100000 ? + */ 0 + ?", []any{1, 2}},
	} {
		b, err := c.Interpolate(nil, tc.query, tc.args)
		if err != nil {
			t.Errorf("%s: %v", tc.query, err)
			continue
		}
		if r, err := c.Query(string(b)); err != nil || r.Rows != 1 {
			t.Errorf("%s as %s: got %+v %v, want one row", tc.query, b, r, err)
		}
	}
}

func TestSessionSettings(t *testing.T) {
	tg := sharedTarget(t)
	check := func(t *testing.T, c *Conn, cond string) {
		t.Helper()
		r, err := c.Query("SELECT 1 FROM DUAL WHERE " + cond)
		if err != nil || r.Rows != 1 {
			t.Errorf("%s: got %+v %v, want it true", cond, r, err)
		}
	}
	cases := []struct {
		name  string
		apply func(cfg *mysql.Config)
		conds []string
	}{
		{"default", func(*mysql.Config) {}, []string{"@@collation_connection = 'utf8mb4_general_ci'"}},
		{"charset parameter", func(cfg *mysql.Config) { cfg.Params = map[string]string{"charset": "latin1"} },
			[]string{"@@character_set_client = 'latin1'", "@@character_set_results = 'latin1'"}},
		{"charset option with fallback", func(cfg *mysql.Config) { cfg.Apply(mysql.Charset("nosuchcs,utf8mb3", "")) },
			[]string{"@@character_set_client = 'utf8mb3'"}},
		{"collation in the handshake", func(cfg *mysql.Config) { cfg.Collation = "utf8mb4_unicode_ci" },
			[]string{"@@collation_connection = 'utf8mb4_unicode_ci'"}},
		{"collation set after", func(cfg *mysql.Config) { cfg.Collation = "latin1_german2_ci" },
			[]string{"@@collation_connection = 'latin1_german2_ci'", "@@character_set_client = 'latin1'"}},
		{"charset and collation", func(cfg *mysql.Config) {
			cfg.Collation = "utf8mb4_bin"
			cfg.Params = map[string]string{"charset": "utf8mb4"}
		}, []string{"@@collation_connection = 'utf8mb4_bin'"}},
		{"session variables", func(cfg *mysql.Config) {
			cfg.Params = map[string]string{"time_zone": "'+01:00'", "sql_mode": "'ANSI_QUOTES'"}
		}, []string{"@@time_zone = '+01:00'", "@@sql_mode = 'ANSI_QUOTES'"}},
		{"database", func(cfg *mysql.Config) {}, []string{"DATABASE() = '" + tg.DB + "'"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tg.Config(tg.Endpoints()[0], tg.DB)
			tc.apply(cfg)
			c, err := Dial(context.Background(), cfg, Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for _, cond := range tc.conds {
				check(t, c, cond)
			}
		})
	}
	t.Run("unsafe charset refuses interpolation", func(t *testing.T) {
		cfg := tg.Config(tg.Endpoints()[0], tg.DB)
		cfg.Params = map[string]string{"charset": "gbk"}
		c, err := Dial(context.Background(), cfg, Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Interpolate(nil, "SELECT ?", []any{"x"}); err == nil {
			t.Error("got nil error, want a refusal")
		}
	})
	t.Run("unknown collation", func(t *testing.T) {
		cfg := tg.Config(tg.Endpoints()[0], tg.DB)
		cfg.Collation = "no_such_collation"
		if c, err := Dial(context.Background(), cfg, Options{}); err == nil {
			c.Close()
			t.Error("got a connection, want an error")
		}
	})
}

func TestPasswordAccounts(t *testing.T) {
	c := dial(t)
	tg := sharedTarget(t)
	r, err := c.Query("SELECT 1 FROM information_schema.plugins WHERE plugin_name = 'ed25519'")
	if err != nil {
		t.Fatal(err)
	}
	if r.Rows == 0 {
		mustQuery(t, c, "INSTALL SONAME 'auth_ed25519'")
	}
	for _, u := range []struct{ user, ident string }{
		{"wire_native", "IDENTIFIED BY 'n4tive pw'"},
		{"wire_ed", "IDENTIFIED VIA ed25519 USING PASSWORD('ed pw 25519')"},
	} {
		mustQuery(t, c, "DROP USER IF EXISTS "+u.user+"@'127.0.0.1'")
		mustQuery(t, c, "CREATE USER "+u.user+"@'127.0.0.1' "+u.ident)
	}
	cases := []struct {
		user, pw string
		ok       bool
	}{
		{"wire_native", "n4tive pw", true},
		{"wire_native", "wrong", false},
		{"wire_ed", "ed pw 25519", true},
		{"wire_ed", "wrong", false},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%v", tc.user, tc.ok), func(t *testing.T) {
			cfg := tg.Config(tg.Endpoints()[0], "")
			cfg.User, cfg.Passwd = tc.user, tc.pw
			c, err := Dial(context.Background(), cfg, Options{})
			if !tc.ok {
				wantServerError(t, err, 1045)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := c.Ping(); err != nil {
				t.Error(err)
			}
		})
	}
}

// The two hangs of issue 14 and the refused 20 MiB statement, against
// MariaDB itself.
func TestBigAndBrokenRepliesFromMariaDB(t *testing.T) {
	c := dial(t)
	mustQuery(t, c, "SET GLOBAL max_allowed_packet = 268435456") // for new connections
	t.Cleanup(func() {
		if _, err := c.Query("SET GLOBAL max_allowed_packet = DEFAULT"); err != nil {
			t.Error(err)
		}
	})
	mustQuery(t, c, "DROP TABLE IF EXISTS wire_big")
	mustQuery(t, c, "CREATE TABLE wire_big (id INT PRIMARY KEY, v INT)")
	mustQuery(t, c, "INSERT INTO wire_big SELECT seq, seq FROM seq_1_to_40000")
	tg := sharedTarget(t)
	conns := map[string]*Conn{}
	for _, m := range modes {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		c, err := dialIn(t, ctx, tg.Config(tg.Endpoints()[0], tg.DB), m.opts)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[m.name] = c
	}
	query := func(c *Conn, q string) func() (Result, error) { return func() (Result, error) { return c.Query(q) } }
	exec := func(c *Conn, q string, args ...any) func() (Result, error) {
		return func() (Result, error) {
			st, err := c.Prepare(q)
			if err != nil {
				return Result{}, err
			}
			defer st.Close()
			return st.Exec(args...)
		}
	}
	const bad = "select id, v, if(id = 20000, (select 1 union select 2), id) from wire_big"
	for _, m := range modes {
		c := conns[m.name]
		_, err := within(t, "error after 20,000 rows", query(c, bad))
		wantServerError(t, err, 1242)
		_, err = within(t, "prepared: error after 20,000 rows", exec(c, bad))
		wantServerError(t, err, 1242)
	}
	// The big ones once each, spread over the modes: they take seconds.
	const huge = "select repeat('a', 41943040)"
	long := "SELECT LENGTH('" + strings.Repeat("x", 20<<20) + "')"
	for _, tc := range []struct {
		name string
		mode string
		run  func(c *Conn) func() (Result, error)
	}{
		{"40 MiB row", "polled", func(c *Conn) func() (Result, error) { return query(c, huge) }},
		{"prepared: 40 MiB row", "looped", func(c *Conn) func() (Result, error) { return exec(c, huge) }},
		{"20 MiB statement", "blocking", func(c *Conn) func() (Result, error) { return query(c, long) }},
		{"20 MiB argument", "looped", func(c *Conn) func() (Result, error) {
			return exec(c, "SELECT LENGTH(?)", strings.Repeat("y", 20<<20))
		}},
	} {
		r, err := within(t, tc.name, tc.run(conns[tc.mode]))
		if err != nil || r.Rows != 1 {
			t.Errorf("%s (%s): got %+v %v, want 1 row", tc.name, tc.mode, r, err)
		}
	}
	for name, c := range conns {
		if c.Broken() {
			t.Errorf("%s connection broken after the big statements", name)
		}
	}
}
