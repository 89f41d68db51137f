package follow

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/usage"
)

// Flags are the follower's command-line options, shared by follow, copy
// --follow and cutover.
type Flags struct {
	Options
	Databases   []string
	From        string
	JSON        string
	MetricsAddr string
	Progress    time.Duration
	VerifyEvery time.Duration
	fromNext    bool
}

// Bind declares the options on fs; own is false for copy --follow, which
// has --databases, --json and --progress of its own and decides --from
// itself.
func (fl *Flags) Bind(fs *pflag.FlagSet, own bool) {
	o := &fl.Options
	if own {
		fs.StringSliceVar(&fl.Databases, "databases", nil, "databases to follow, by the same names on TARGET (default: SOURCE's database into TARGET's)")
		fs.StringVar(&fl.From, "from", "", "start at this position of the source's binary log, FILE:POS or a GTID set, instead of the one saved in TARGET")
		fs.BoolVar(&o.AllowWrite, "allow-write", false, "write to TARGET (required)")
		fs.StringVar(&fl.JSON, "json", "", "write a JSON line per progress interval, then the summary, to FILE (- for standard output)")
	}
	fs.BoolVar(&o.UntilCaughtUp, "until-caught-up", false, "stop once the position the source had when following began is applied")
	fs.DurationVar(&o.Duration, "follow-for", 0, "stop following after this long (0: until Ctrl-C or SIGTERM)")
	fs.IntVar(&o.Workers, "workers", 4, "target connections changes are applied on, by a hash of table and key")
	fs.IntVar(&o.BatchRows, "batch-rows", 2000, "row changes applied per batch at most (a batch is one transaction per worker)")
	fs.BoolVar(&o.SkipDDL, "skip-ddl", false, "go on past the DDL statement the last follower stopped before, leaving it out")
	fs.BoolVar(&fl.fromNext, "from-next", false, "go on after the DDL statement the last follower stopped before, which you applied on TARGET by hand")
	fs.Uint32Var(&o.ServerID, "server-id", 0, "the replica server_id the follower registers with (default: one derived from the target databases)")
	fs.DurationVar(&fl.VerifyEvery, "verify-every", 0, "verify the followed databases once the follower has caught up, then every this long; a chunk that differs is compared again after the follower passes it (0: never)")
	fs.StringVar(&fl.MetricsAddr, "metrics-addr", "", "serve the follower's Prometheus metrics at HOST:PORT/metrics")
	if own {
		fs.DurationVar(&fl.Progress, "progress", 2*time.Second, "progress line interval on standard error (0: none)")
	}
}

// Resolve checks the options and reads --from and --databases into
// Options.
func (fl *Flags) Resolve(cmd string) (Options, error) {
	o := fl.Options
	o.SkipDDL = o.SkipDDL || fl.fromNext
	if err := o.Validate(cmd); err != nil {
		return o, err
	}
	for _, d := range fl.Databases {
		o.Databases = append(o.Databases, Pair{d, d})
	}
	if fl.From != "" {
		p, err := ParsePosition(fl.From)
		if err != nil {
			return o, usage.Errorf("%s: --from: %v", cmd, err)
		}
		o.From = p
	}
	return o, nil
}

// ParsePosition reads FILE:POS, or FILE:POS followed by a GTID set after a
// space ("binlog.000001:3797696 0-1-9"), as the copy's report and the
// summary print them.
func ParsePosition(s string) (Position, error) {
	s = strings.TrimSpace(strings.Replace(s, " gtid ", " ", 1))
	head, gtid, _ := strings.Cut(s, " ")
	file, pos, ok := strings.Cut(head, ":")
	n, err := strconv.ParseUint(pos, 10, 32)
	if !ok || file == "" || err != nil || n < 4 {
		return Position{}, fmt.Errorf("want FILE:POS (binlog.000001:3797696) with an optional GTID set after a space, got %q", s)
	}
	return Position{File: file, Pos: uint32(n), GTID: strings.TrimSpace(gtid)}, nil
}
