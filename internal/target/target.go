// Package target parses where load goes (a mysql:// URL or sysbench's
// --mysql-* options), opens every connection pool to a server (package
// client opens the wire connections of the load), explains a failed
// connect, detects the server's flavour and version, and names the MySQL
// error numbers with their meaning (errcode.go). A Target's password never
// leaves this package in printable form: String and Redacted omit it.
package target

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/flavour"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/suggest"
)

// Target is one database server (or several endpoints of one service).
type Target struct {
	Name     string
	Hosts    []string
	Ports    []int
	Socket   string
	User     string
	Password string
	// PasswordFrom says where Password came from, for messages ("the URL",
	// "MYSQL_PWD", "/home/u/.my.cnf [client]"); "" when there is none. It
	// never holds the password.
	PasswordFrom string
	// PasswordEnv is ?password_env=NAME: the environment variable that
	// holds this target's password, for commands that take several targets
	// with different passwords (replay, plans).
	PasswordEnv string
	DB          string
	// TLS is go-sql-driver's tls parameter: "", "true", "skip-verify",
	// "preferred" or "false".
	TLS string
	// TLSCA, TLSCert and TLSKey are the files ?tls-ca=, ?tls-cert= and
	// ?tls-key= name: the CA that signed the server's certificate (instead
	// of the system's), and a client certificate and key for servers that
	// ask for one. tlsBase is what they load to.
	TLSCA, TLSCert, TLSKey string
	tlsBase                *tls.Config
	// Charset and Collation are the connection's (?charset=, ?collation=);
	// "" leaves the client's default, utf8mb4.
	Charset        string
	Collation      string
	ConnectTimeout time.Duration
	// Params are session variables set on every connection (SET k = v);
	// callers set them (verify's time_zone), never the URL.
	Params map[string]string
	// TimeoutOption is the command's option that sets ConnectTimeout
	// ("--connect-timeout"), named when a server does not answer in time;
	// "" where only the URL's ?timeout= can.
	TimeoutOption string

	dbNamed bool        // the URL or --mysql-db named the database
	creds   Credentials // where Resolve's caller looks for a password
}

// Endpoint is one host:port (or socket) of a Target.
type Endpoint struct {
	Host   string
	Port   int
	Socket string
}

// Local reports whether the endpoint is on this host: a socket, a
// loopback address, localhost, or an address of one of this host's
// interfaces.
func (e Endpoint) Local() bool {
	if e.Socket != "" || e.Host == "localhost" {
		return true
	}
	ip := net.ParseIP(e.Host)
	if ip == nil {
		return false
	}
	if ip.IsLoopback() {
		return true
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return false
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.Equal(ip) {
			return true
		}
	}
	return false
}

func (e Endpoint) String() string {
	if e.Socket != "" {
		return e.Socket
	}
	return net.JoinHostPort(e.Host, strconv.Itoa(e.Port))
}

// Defaults are sysbench's.
const (
	DefaultHost = "localhost"
	DefaultPort = 3306
	DefaultUser = "sbtest"
	DefaultDB   = "sbtest"
)

// Parse reads a URL of the form
// mysql://user:password@host:port/db?socket=/path&tls=true&timeout=5s.
// host and port may be comma lists, as with --mysql-host. A password that
// holds a character with a meaning in URLs (/ # ? @) must be
// percent-encoded; an error never shows any part of the password.
func Parse(raw string) (*Target, error) {
	// net/url rejects port lists, so the host part is taken out first and
	// read here.
	hostPart := ""
	if rest, ok := strings.CutPrefix(raw, "mysql://"); ok {
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		auth := rest[:end]
		if strings.Contains(rest[end:], "@") {
			// mysql://u:p@ss/w#rd@host/db: the authority ended inside the
			// password, whose tail would be read as a host name and sent
			// to DNS.
			return nil, errUnencoded
		}
		at := strings.LastIndex(auth, "@")
		if at >= 0 && !validUserinfo(auth[:at]) {
			return nil, errUnencoded
		}
		hostPart = auth[at+1:]
		raw = "mysql://" + auth[:at+1] + "placeholder" + rest[end:]
	}
	if !strings.Contains(raw, "://") {
		shown := raw
		if at := strings.LastIndex(shown, "@"); at >= 0 {
			shown = "..." + shown[at:] // what comes before an @ may be a password
		}
		return nil, fmt.Errorf("target %q is not a URL: write mysql://user@host:port/db", shown)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parse target URL: %s", redactURLError(err))
	}
	if u.Scheme != "mysql" {
		return nil, fmt.Errorf("target URL must start with mysql:// (got %q)", u.Scheme+"://")
	}
	if u.Fragment != "" || strings.HasSuffix(raw, "#") {
		return nil, fmt.Errorf("target URL: a '#' ends it: percent-encode a '#' in the database name as %%23")
	}
	t := &Target{User: DefaultUser, DB: DefaultDB, Params: map[string]string{}}
	if u.User != nil {
		t.User = u.User.Username()
		t.Password, _ = u.User.Password()
		if t.Password != "" {
			t.PasswordFrom = "the URL"
		}
	}
	if host := hostPart; host != "" {
		hosts, portPart := host, ""
		if i := strings.LastIndex(host, ":"); i >= 0 && !strings.HasSuffix(host, "]") {
			hosts, portPart = host[:i], host[i+1:]
		}
		if hosts != "" {
			t.Hosts = strings.Split(strings.Trim(hosts, "[]"), ",")
		}
		// h:1:2 would send the host "h:1" to DNS; a colon belongs in a
		// host only inside the brackets of an IPv6 address.
		if !strings.HasPrefix(hosts, "[") && strings.Contains(hosts, ":") {
			return nil, fmt.Errorf("target URL: %q has more than one port: write host:port, several ports as a list (host:3306,3307), an IPv6 address in brackets ([::1]:3306)", host)
		}
		if portPart != "" {
			if err := (*sbflag.Ports)(&t.Ports).Set(portPart); err != nil {
				return nil, fmt.Errorf("target URL port: %w", err)
			}
		}
	}
	if db := strings.TrimPrefix(u.Path, "/"); db != "" {
		t.DB, t.dbNamed = db, true
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return nil, fmt.Errorf("target URL: malformed parameters: %v (parameters are ?name=value&name=value)", err)
	}
	if err := t.setParams(q); err != nil {
		return nil, err
	}
	t.fill()
	return t, nil
}

// errUnencoded is a URL whose user or password holds a character that
// ends a URL's user part. It says nothing of the password.
var errUnencoded = errors.New("target URL: the user or password holds a character that must be percent-encoded: / as %2F, # as %23, ? as %3F, @ as %40 (e.g. mysql://bench:p%40ss%2Fword@host:3306/db), or give the password another way (shakedown help targets)")

// validUserinfo reports whether s is a URL's user:password part that
// needs no more escaping (RFC 3986 userinfo).
func validUserinfo(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("-._~!$&'()*+,;=:%", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// Params are the URL parameters a target understands.
var Params = []string{"socket", "tls", "tls-ca", "tls-cert", "tls-key", "timeout", "connect_timeout", "charset", "collation", "password_env"}

// TLSModes are the values of ?tls=.
var TLSModes = []string{"true", "false", "skip-verify", "preferred"}

// envNameRE is an environment variable's name.
var envNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// identRE is a character set or collation name: it goes into SET NAMES as
// it is, so nothing else may.
var identRE = regexp.MustCompile(`^[A-Za-z0-9_]{1,64}$`)

// setParams reads the URL's query parameters. An unknown one is refused:
// the driver would send it as an unquoted SET k = v.
func (t *Target) setParams(q url.Values) error {
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := q[k][len(q[k])-1]
		switch k {
		case "socket":
			t.Socket = v
		case "tls":
			if !slices.Contains(TLSModes, v) {
				return fmt.Errorf("target URL tls=%q: want one of %s", v, strings.Join(TLSModes, ", "))
			}
			t.TLS = v
		case "timeout", "connect_timeout":
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				return fmt.Errorf("target URL %s=%q: want a duration such as 5s", k, v)
			}
			t.ConnectTimeout = d
		case "charset", "collation":
			if !identRE.MatchString(v) {
				return fmt.Errorf("target URL %s=%q: want a name such as utf8mb4%s", k, v, map[bool]string{true: "_bin", false: ""}[k == "collation"])
			}
			if unsafeCharset(v) {
				return fmt.Errorf("target URL %s=%s: not supported: its multi-byte characters may hold a backslash, which breaks the client's quoting; use utf8mb4", k, v)
			}
			if k == "charset" {
				t.Charset = v
			} else {
				t.Collation = v
			}
		case "password_env":
			if !envNameRE.MatchString(v) {
				return fmt.Errorf("target URL password_env=%q: want the name of an environment variable, such as DB_PASSWORD", v)
			}
			t.PasswordEnv = v
		case "tls-ca":
			t.TLSCA = v
		case "tls-cert":
			t.TLSCert = v
		case "tls-key":
			t.TLSKey = v
		case "compress":
			return fmt.Errorf("target URL: compress is not supported: remove ?compress=%s", v)
		default:
			return fmt.Errorf("target URL: unknown parameter %q%s; known: %s", k, suggest.DidYouMean(k, Params), strings.Join(Params, ", "))
		}
	}
	if t.Collation != "" && t.Charset == "" {
		// SET NAMES needs the character set the collation belongs to.
		t.Charset, _, _ = strings.Cut(t.Collation, "_")
	}
	return t.loadTLS()
}

// loadTLS reads the files of ?tls-ca=, ?tls-cert= and ?tls-key=. A CA or
// a client certificate means TLS with the server verified, unless ?tls=
// says otherwise (skip-verify keeps the certificate, verifies nothing).
func (t *Target) loadTLS() error {
	if t.TLSCA == "" && t.TLSCert == "" && t.TLSKey == "" {
		return nil
	}
	if t.TLS == "false" {
		return fmt.Errorf("target URL: tls=false with tls-ca, tls-cert or tls-key: remove one or the other")
	}
	if (t.TLSCert == "") != (t.TLSKey == "") {
		return fmt.Errorf("target URL: tls-cert and tls-key go together: give both files or neither")
	}
	tc := &tls.Config{}
	if t.TLSCA != "" {
		pem, err := os.ReadFile(t.TLSCA)
		if err != nil {
			return fmt.Errorf("target URL tls-ca: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return fmt.Errorf("target URL tls-ca=%s: no PEM certificate in the file", t.TLSCA)
		}
		tc.RootCAs = pool
	}
	if t.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(t.TLSCert, t.TLSKey)
		if err != nil {
			return fmt.Errorf("target URL tls-cert/tls-key: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	switch t.TLS {
	case "", "true":
		t.TLS = "true"
	case "skip-verify", "preferred":
		tc.InsecureSkipVerify = true
	}
	t.tlsBase = tc
	return nil
}

// unsafeCharset reports character sets (or their collations) whose
// multi-byte characters may end in a backslash byte.
func unsafeCharset(name string) bool {
	name = strings.ToLower(name)
	for _, cs := range []string{"big5", "sjis", "gbk", "cp932", "gb18030"} {
		if name == cs || strings.HasPrefix(name, cs+"_") {
			return true
		}
	}
	return false
}

// redactURLError keeps url.Parse from echoing a password back.
func redactURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return "malformed URL"
}

func (t *Target) fill() {
	if len(t.Hosts) == 0 {
		t.Hosts = []string{DefaultHost}
	}
	if len(t.Ports) == 0 {
		t.Ports = []int{DefaultPort}
	}
	if t.ConnectTimeout == 0 {
		t.ConnectTimeout = 10 * time.Second
	}
}

// Flags holds sysbench's connection options until Resolve turns them into a
// Target. --target, when given, wins over the --mysql-* options it names.
type Flags struct {
	URL      string
	Hosts    sbflag.Strings
	Ports    []int
	Socket   string
	User     string
	Password string
	DB       string
	SSL      bool
	Timeout  time.Duration
	// Creds say where the password comes from when the URL and
	// --mysql-password give none.
	Creds Credentials
	fs    *pflag.FlagSet
}

// Bind adds the connection options to fs.
func (f *Flags) Bind(fs *pflag.FlagSet) {
	f.fs = fs
	fs.StringVar(&f.URL, "target", "", "target URL mysql://user:password@host:port/db (host and port may be lists)")
	fs.Var(&f.Hosts, "mysql-host", "MySQL server host (a list spreads connections round-robin)")
	fs.Var((*sbflag.Ports)(&f.Ports), "mysql-port", "MySQL server port (a list spreads connections round-robin)")
	fs.StringVar(&f.Socket, "mysql-socket", "", "MySQL socket")
	fs.StringVar(&f.User, "mysql-user", DefaultUser, "MySQL user")
	fs.StringVar(&f.Password, "mysql-password", "", "MySQL password")
	fs.StringVar(&f.DB, "mysql-db", DefaultDB, "MySQL database name")
	sbflag.BoolVar(fs, &f.SSL, "mysql-ssl", false, "use TLS connections")
	fs.DurationVar(&f.Timeout, "connect-timeout", 10*time.Second, "give up connecting after this long")
	f.Creds.Bind(fs)
}

// Resolve returns the Target the options describe. Its password, when the
// URL and --mysql-password give none, is looked up by LoadPassword, which
// needs the environment.
func (f *Flags) Resolve() (*Target, error) {
	var t *Target
	if f.URL != "" {
		var err error
		if t, err = Parse(f.URL); err != nil {
			return nil, err
		}
	} else {
		t = &Target{User: f.User, Password: f.Password, DB: f.DB, Socket: f.Socket, Params: map[string]string{}}
		if f.Password != "" {
			t.PasswordFrom = "--mysql-password"
		}
		t.Hosts = append(t.Hosts, f.Hosts...)
		t.Ports = append(t.Ports, f.Ports...)
		if f.SSL {
			t.TLS = "skip-verify"
		}
	}
	// Explicit --mysql-* options override what the URL said.
	if f.fs != nil {
		if f.changed("mysql-host") {
			t.Hosts = append([]string(nil), f.Hosts...)
		}
		if f.changed("mysql-port") {
			t.Ports = append([]int(nil), f.Ports...)
		}
		if f.changed("mysql-user") {
			t.User = f.User
		}
		if f.changed("mysql-password") {
			t.Password, t.PasswordFrom = f.Password, "--mysql-password"
		}
		if f.changed("mysql-db") {
			t.DB, t.dbNamed = f.DB, true
		}
		if f.changed("mysql-socket") {
			t.Socket = f.Socket
		}
		if f.changed("connect-timeout") {
			t.ConnectTimeout = f.Timeout
		}
	}
	if t.ConnectTimeout <= 0 {
		t.ConnectTimeout = f.Timeout
	}
	t.creds = f.Creds
	t.TimeoutOption = "--connect-timeout"
	t.fill()
	return t, nil
}

// LoadPassword looks for a password in the sources the options named
// (--password-file, the environment, option files) when the target has
// none; see Credentials. getenv reads the environment.
func (t *Target) LoadPassword(getenv func(string) string) error {
	return t.creds.Fill(t, getenv)
}

// NamesDB reports whether the URL (or --mysql-db) named the database,
// rather than DB holding the default.
func (t *Target) NamesDB() bool { return t.dbNamed }

// OptionValues are the connection options as the target resolved them
// (user, hosts, ports, database, socket), named as sysbench's options, to
// record with a result in place of the options' defaults.
func (t *Target) OptionValues() map[string]string {
	ports := make([]string, len(t.Ports))
	for i, p := range t.Ports {
		ports[i] = strconv.Itoa(p)
	}
	return map[string]string{
		"mysql-user":   t.User,
		"mysql-host":   strings.Join(t.Hosts, ","),
		"mysql-port":   strings.Join(ports, ","),
		"mysql-db":     t.DB,
		"mysql-socket": t.Socket,
	}
}

func (f *Flags) changed(name string) bool {
	fl := f.fs.Lookup(name)
	return fl != nil && fl.Changed
}

// Endpoints lists where connections go; connection i uses Endpoints()[i%n].
// As with sysbench, hosts and ports are walked together, each list wrapping
// on its own, so two hosts and one port give two endpoints.
func (t *Target) Endpoints() []Endpoint {
	if t.Socket != "" {
		return []Endpoint{{Socket: t.Socket}}
	}
	n := len(t.Hosts)
	if len(t.Ports) > n {
		n = len(t.Ports)
	}
	eps := make([]Endpoint, n)
	for i := range eps {
		eps[i] = Endpoint{Host: t.Hosts[i%len(t.Hosts)], Port: t.Ports[i%len(t.Ports)]}
	}
	return eps
}

// Redacted is the target as a URL without its password.
func (t *Target) Redacted() string {
	var b strings.Builder
	b.WriteString("mysql://")
	b.WriteString(url.PathEscape(t.User))
	b.WriteString("@")
	if t.Socket != "" {
		b.WriteString("/" + t.DB + "?socket=" + t.Socket)
		return b.String()
	}
	ports := make([]string, len(t.Ports))
	for i, p := range t.Ports {
		ports[i] = strconv.Itoa(p)
	}
	b.WriteString(strings.Join(t.Hosts, ","))
	b.WriteString(":" + strings.Join(ports, ","))
	b.WriteString("/" + t.DB)
	return b.String()
}

// String is the display name: Name when set, else the redacted URL.
func (t *Target) String() string {
	if t.Name != "" {
		return t.Name
	}
	return t.Redacted()
}

// Config returns the driver configuration for endpoint ep, with db as the
// default database ("" for none). The result holds the password: never print it.
func (t *Target) Config(ep Endpoint, db string) *mysql.Config {
	c := mysql.NewConfig()
	c.User = t.User
	c.Passwd = t.Password
	c.DBName = db
	if ep.Socket != "" {
		c.Net = "unix"
		c.Addr = ep.Socket
	} else {
		c.Net = "tcp"
		c.Addr = ep.String()
	}
	c.Timeout = t.ConnectTimeout
	c.InterpolateParams = true
	c.AllowNativePasswords = true
	c.AllowCleartextPasswords = t.TLS != "" && t.TLS != "false"
	c.AllowAllFiles = true // LOAD DATA LOCAL from generated readers only
	// A fixed size spares a query on every connect, which would also show in
	// the server's statement counters.
	c.MaxAllowedPacket = 64 << 20
	c.TLSConfig = t.TLS
	if t.tlsBase != nil {
		// A configuration of our own, for this endpoint's host name.
		c.TLS = t.tlsBase.Clone()
		if !c.TLS.InsecureSkipVerify && ep.Socket == "" {
			c.TLS.ServerName = ep.Host
		}
		c.AllowFallbackToPlaintext = t.TLS == "preferred"
	}
	c.Logger = quietLogger{} // failures are returned as errors and reported once
	if t.Charset != "" {
		// Only fails on options that cannot fail.
		_ = c.Apply(mysql.Charset(t.Charset, t.Collation))
	}
	if len(t.Params) > 0 {
		c.Params = map[string]string{}
		for k, v := range t.Params {
			c.Params[k] = v
		}
	}
	return c
}

// Open returns a pool on endpoint ep using the target's database, sized for
// size connections. The caller closes it.
func (t *Target) Open(ep Endpoint, size int) (*sql.DB, error) {
	return t.open(ep, t.DB, size)
}

// OpenNoDB is Open without a default database (to create it, say).
func (t *Target) OpenNoDB(ep Endpoint, size int) (*sql.DB, error) {
	return t.open(ep, "", size)
}

// connector is the driver's connector for cfg (one of t's Configs, that a
// caller may have changed) whose every connect ends with the connect
// timeout if the server has not answered: see boundedConnector.
func (t *Target) connector(cfg *mysql.Config) (driver.Connector, error) {
	conn, err := newRetryConnector(cfg)
	if err != nil {
		return nil, err
	}
	return boundedConnector{conn, t.ConnectTimeout}, nil
}

func (t *Target) open(ep Endpoint, db string, size int) (*sql.DB, error) {
	pool, err := t.OpenConfig(t.Config(ep, db), size)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", ep, err)
	}
	return pool, nil
}

// OpenConfig returns a pool on cfg, one of t's Configs that the caller has
// changed (its own timeouts, statements or default database), keeping
// size connections idle. Every connect of the pool is bounded by the
// connect timeout. The caller closes it and may size it further.
func (t *Target) OpenConfig(cfg *mysql.Config, size int) (*sql.DB, error) {
	conn, err := t.connector(cfg)
	if err != nil {
		return nil, err
	}
	pool := sql.OpenDB(conn)
	if size < 1 {
		size = 1
	}
	pool.SetMaxOpenConns(0)
	pool.SetMaxIdleConns(size)
	return pool, nil
}

// Server describes what answers at a target.
type Server struct {
	Version string       `json:"version"`
	Flavour flavour.Name `json:"flavour"` // see package flavour
	// Storage is the flavour of the server beneath a gateway (the
	// MariaDB under vtgate); empty when the server keeps its own data.
	Storage flavour.Name `json:"storage,omitempty"`
}

// Stores is the flavour whose catalog and column types the data follows:
// the server beneath a gateway, else the server itself.
func (s Server) Stores() flavour.Name {
	if s.Storage != "" {
		return s.Storage
	}
	return s.Flavour
}

// Detect asks the server what it is, once per target: see flavour.Detect.
func Detect(ctx context.Context, q flavour.Querier) (Server, error) {
	version, f, err := flavour.Detect(ctx, q)
	if err != nil {
		return Server{}, err
	}
	return Server{Version: version, Flavour: f, Storage: flavour.Beneath(ctx, q, f)}, nil
}

// quietLogger drops the driver's own log lines.
type quietLogger struct{}

func (quietLogger) Print(...any) {}
