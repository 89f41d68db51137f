package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/shakedown/shakedown/internal/slap"
)

// slapCmd is "shakedown slap [mysqlslap options]".
type slapCmd struct {
	opts slap.Options
}

const slapUsage = `usage: shakedown slap [mysqlslap options]

Runs a query, a file of queries, or auto-generated SQL at each --concurrency,
--iterations times, exactly as mysqlslap does (same options, same statements in
the same order, the same summary lines), then prints what mysqlslap does not say:
queries per second, latency percentiles overall and per statement, connect time
and errors by code.

  shakedown slap -h127.0.0.1 -P3306 -ubench -pSECRET --create-schema=test \
      --concurrency=16,64 --iterations=2 --number-of-queries=20000 --delimiter=';' \
      --query='begin;update seckill set num=num-1 where id=1 and num>1;commit;'

Options:
`

func (c *slapCmd) run(ctx context.Context, env *Env, args []string) error {
	o := &c.opts
	if err := o.Parse(args); err != nil {
		return usagef("slap: %v; see shakedown slap --help", err)
	}
	switch {
	case o.Help:
		fmt.Fprint(env.Stdout, slapUsage)
		fmt.Fprint(env.Stdout, o.Flags().FlagUsages())
		return nil
	case o.Version:
		fmt.Fprintf(env.Stdout, "shakedown slap %s (mysqlslap-compatible, Ver 1.0)\n", Version)
		return nil
	}
	if o.PasswordPrompt && !o.Changed("password") {
		pw, err := readPassword(env.Stdin)
		if err != nil {
			return err
		}
		if err := o.Flags().Set("password", pw); err != nil {
			return err
		}
	}
	b, err := slap.Load(o, env.Getenv)
	if err != nil {
		return err
	}
	err = b.Run(ctx, slap.Env{Out: env.Stdout, Err: env.Stderr})
	if errors.Is(err, slap.ErrInterrupted) {
		return errors.New("interrupted: the summary above covers what ran before the stop")
	}
	return err
}

// readPassword takes the password of a bare -p from standard input, one
// line, when that is not a terminal: there is no way to ask without echoing
// it, and scripts have no terminal.
func readPassword(in io.Reader) (string, error) {
	refuse := usagef("-p without a password asks for one, but shakedown does not read passwords from a terminal: give it attached (-pSECRET), as --password=SECRET, in MYSQL_PWD, or pipe it on standard input")
	if f, ok := in.(*os.File); ok {
		if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice != 0 {
			return "", refuse
		}
	}
	if in == nil {
		return "", refuse
	}
	line, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read password from standard input: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" && errors.Is(err, io.EOF) {
		return "", refuse
	}
	return line, nil
}
