// Package cli implements shakedown's command line: one file per subcommand,
// each a small struct that owns its flags. Nothing here touches the process
// directly; main hands in an Env.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/shakedown/shakedown/internal/engine"
	"github.com/shakedown/shakedown/internal/usage"
)

// Env is the process state main hands to the command line.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// Exit codes.
const (
	ExitOK          = 0
	ExitFailure     = 1
	ExitUsage       = 2
	ExitDifferences = 3
)

// usagef is bad input from the user: exit code 2.
var usagef = usage.Errorf

// ErrDifferences means a comparison found differences: exit code 3.
var ErrDifferences = errors.New("differences found")

// command is one subcommand.
type command struct {
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
}

func commands() map[string]command {
	return map[string]command{
		"prepare": {"create a workload's tables and data", func(ctx context.Context, env *Env, args []string) error {
			return (&benchCmd{verb: "prepare"}).run(ctx, env, args)
		}},
		"run": {"run a workload and report throughput and latency", func(ctx context.Context, env *Env, args []string) error {
			return (&benchCmd{verb: "run"}).run(ctx, env, args)
		}},
		"cleanup": {"drop a workload's tables", func(ctx context.Context, env *Env, args []string) error {
			return (&benchCmd{verb: "cleanup"}).run(ctx, env, args)
		}},
		"slap": {"mysqlslap's options and summary, plus QPS, percentiles and errors", func(ctx context.Context, env *Env, args []string) error {
			return (&slapCmd{}).run(ctx, env, args)
		}},
		"sandbox": {"start, stop and list throwaway local servers", func(ctx context.Context, env *Env, args []string) error {
			return (&sandboxCmd{}).run(ctx, env, args)
		}},
		"sweep": {"run a plan: targets x workloads x thread levels x repeats, stored", func(ctx context.Context, env *Env, args []string) error {
			return (&sweepCmd{}).run(ctx, env, args)
		}},
		"report": {"compare stored results: tables, ratios, verdicts, charts", func(ctx context.Context, env *Env, args []string) error {
			return (&reportCmd{}).run(ctx, env, args)
		}},
		"baseline": {"save, list and delete baselines that later results are compared with", func(ctx context.Context, env *Env, args []string) error {
			return (&baselineCmd{}).run(ctx, env, args)
		}},
		"demo": {"two local sandboxes, a sweep and a report, in a few minutes", func(ctx context.Context, env *Env, args []string) error {
			return (&demoCmd{}).run(ctx, env, args)
		}},
		"watch": {"per-second server status, orzdba style", func(ctx context.Context, env *Env, args []string) error {
			return (&watchCmd{}).run(ctx, env, args)
		}},
		"vars": {"compare servers' global variables (vars diff A B...)", func(ctx context.Context, env *Env, args []string) error {
			return (&varsCmd{}).run(ctx, env, args)
		}},
		"verify": {"prove a target holds exactly the source's data; print repair SQL", func(ctx context.Context, env *Env, args []string) error {
			return (&verifyCmd{}).run(ctx, env, args)
		}},
		"analyze": {"ANALYZE TABLE every table of a target (refresh statistics)", func(ctx context.Context, env *Env, args []string) error {
			return (&analyzeCmd{}).run(ctx, env, args)
		}},
		"version": {"print the version", func(ctx context.Context, env *Env, args []string) error {
			_, err := fmt.Fprintln(env.Stdout, "shakedown", Version)
			return err
		}},
	}
}

// Version is set at build time.
var Version = "dev"

func init() { engine.Version = Version }

// Main runs one command line and returns the process exit code.
func Main(ctx context.Context, env *Env, args []string) int {
	err := dispatch(ctx, env, args)
	if err == nil {
		return ExitOK
	}
	switch {
	case usage.Is(err):
		fmt.Fprintln(env.Stderr, "shakedown:", err)
		return ExitUsage
	case errors.Is(err, ErrDifferences):
		return ExitDifferences
	case errors.Is(err, errSilent):
		return ExitFailure
	default:
		fmt.Fprintln(env.Stderr, "shakedown:", err)
		return ExitFailure
	}
}

// errSilent is a failure already explained to the user.
var errSilent = errors.New("failed")

func dispatch(ctx context.Context, env *Env, args []string) error {
	cmds := commands()
	if len(args) > 0 && args[0] == "sysbench" {
		// "shakedown sysbench oltp_read_write ... run" is a sysbench line
		// with shakedown in front of it.
		args = args[1:]
	}
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		printUsage(env.Stdout, cmds)
		return nil
	}
	if c, ok := cmds[args[0]]; ok {
		return c.run(ctx, env, args[1:])
	}
	// sysbench's order: WORKLOAD [options] COMMAND.
	if verb := args[len(args)-1]; verb == "prepare" || verb == "run" || verb == "cleanup" {
		rest := append([]string{}, args[:len(args)-1]...)
		return (&benchCmd{verb: verb}).run(ctx, env, rest)
	}
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	return usagef("unknown command %q; commands: %s", args[0], strings.Join(names, ", "))
}

func printUsage(w io.Writer, cmds map[string]command) {
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintln(w, "usage: shakedown COMMAND [options]")
	fmt.Fprintln(w)
	for _, n := range names {
		fmt.Fprintf(w, "  %-9s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Run 'shakedown COMMAND --help' for a command's options.")
}
