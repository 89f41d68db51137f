// Package cli implements shakedown's command line: one file per subcommand,
// each a small struct that owns its flags. Nothing here touches the process
// directly; main hands in an Env.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/shakedown/shakedown/internal/bench"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/suggest"
	"github.com/shakedown/shakedown/internal/usage"
	"github.com/shakedown/shakedown/internal/version"
)

// Env is the process state main hands to the command line.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	// Notify relays the signals named (mirror's SIGHUP) until stop; nil
	// relays none.
	Notify func(sig ...os.Signal) (c <-chan os.Signal, stop func())
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

// subcommand is a subcommand's struct: it owns its flags and runs once.
type subcommand interface {
	run(ctx context.Context, env *Env, args []string) error
}

// cmd is a command that runs a fresh struct from newCmd each time.
func cmd(summary string, newCmd func() subcommand) command {
	return command{summary, func(ctx context.Context, env *Env, args []string) error { return newCmd().run(ctx, env, args) }}
}

// parsedCmd is a subcommand whose flags the dispatcher parses: exec runs
// with the parsed set once --help and bad flags have been answered.
type parsedCmd interface {
	flags(env *Env) *pflag.FlagSet
	exec(ctx context.Context, env *Env, fs *pflag.FlagSet) error
}

// parsed is a command that parses the flags of a fresh struct from newCmd
// each time, then runs it: name is the command in messages, usage its help.
func parsed(summary, name, usage string, newCmd func() parsedCmd) command {
	return command{summary, func(ctx context.Context, env *Env, args []string) error {
		return runParsed(ctx, env, args, name, usage, newCmd())
	}}
}

// runParsed parses c's flags from args and runs c; --help prints usage and
// the flags instead.
func runParsed(ctx context.Context, env *Env, args []string, name, usage string, c parsedCmd) error {
	fs := commandFlags(env, c)
	var sections []sbflag.Section
	if s, ok := c.(sectioned); ok {
		sections = s.helpSections()
	}
	if help, err := parseFlags(env, fs, args, name, usage, sections...); help || err != nil {
		return err
	}
	return c.exec(ctx, env, fs)
}

// verb is one subcommand of a command that has several (host facts, vars
// diff): run gets the arguments after the verb.
type verb struct {
	name string
	run  func(args []string) error
}

// runVerbs runs the verb args[0] names. Help prints usage and helpFlags,
// the first verb's flags.
func runVerbs(env *Env, args []string, name, usage string, helpFlags *pflag.FlagSet, verbs []verb) error {
	names := make([]string, len(verbs))
	for i, v := range verbs {
		names[i] = v.name
	}
	list := strings.Join(names, " or ")
	if len(args) == 0 {
		return usagef("%s: missing subcommand: use %s (see shakedown %s --help)", name, list, name)
	}
	switch args[0] {
	case "-h", "--help", "help":
		fmt.Fprint(env.Stdout, usage, helpFlags.FlagUsages())
		return nil
	}
	for _, v := range verbs {
		if v.name == args[0] {
			return v.run(args[1:])
		}
	}
	return usagef("%s: unknown subcommand %q: use %s (see shakedown %s --help)", name, args[0], list, name)
}

func commands() map[string]command {
	return map[string]command{
		"prepare":   cmd("create a workload's tables and data", func() subcommand { return &benchCmd{verb: "prepare"} }),
		"run":       cmd("run a workload and report throughput and latency", func() subcommand { return &benchCmd{verb: "run"} }),
		"cleanup":   cmd("drop a workload's tables", func() subcommand { return &benchCmd{verb: "cleanup"} }),
		"slap":      cmd("mysqlslap's options and summary, plus QPS, percentiles and errors", func() subcommand { return &slapCmd{} }),
		"sandbox":   cmd("start, stop and list throwaway local servers", func() subcommand { return &sandboxCmd{} }),
		"capacity":  cmd("the highest rate each target sustains within a latency SLO (--slo 'p99<=20ms')", func() subcommand { return &capacityCmd{} }),
		"sweep":     parsed("run a plan: targets x workloads x thread levels x repeats, stored", "sweep", sweepHelp, func() parsedCmd { return &sweepCmd{} }),
		"report":    parsed("compare stored results: tables, ratios, verdicts, charts", "report", reportHelp, func() parsedCmd { return &reportCmd{} }),
		"baseline":  cmd("save, list and delete baselines that later results are compared with", func() subcommand { return &baselineCmd{} }),
		"demo":      cmd("two local sandboxes, a sweep and a report, in a few minutes", func() subcommand { return &demoCmd{} }),
		"watch":     parsed("per-second server status, orzdba style", "watch", watchHelp, func() parsedCmd { return &watchCmd{} }),
		"vars":      cmd("compare servers' global variables (vars diff A B...)", func() subcommand { return &varsCmd{} }),
		"host":      cmd("host facts that change performance, and their differences (host facts, host diff A B...)", func() subcommand { return &hostCmd{} }),
		"verify":    parsed("prove a target holds exactly the source's data; print repair SQL", "verify", verifyHelp, func() parsedCmd { return &verifyCmd{} }),
		"check":     parsed("pre-migration findings: settings, objects, accounts, flavour gaps, binlog prerequisites", "check", checkHelp, func() parsedCmd { return &checkCmd{} }),
		"readiness": parsed("one go/no-go page for a source and target: check, variables, sweeps, replay, verify", "readiness", readinessHelp, func() parsedCmd { return &readinessCmd{} }),
		"copy":      parsed("copy a database, or a consistent subset with its foreign keys whole, to a target; verify it", "copy", copyHelp, func() parsedCmd { return &copyCmd{} }),
		"follow":    parsed("apply the source's binary log to a copy: resumable, verified while it runs", "follow", followHelp, func() parsedCmd { return &followCmd{} }),
		"cutover":   parsed("rehearse the switch: lag, read_only, final position, verify; the write-unavailable window", "cutover", cutoverHelp, func() parsedCmd { return &cutoverCmd{} }),
		"analyze":   parsed("ANALYZE TABLE every table of a target (refresh statistics)", "analyze", analyzeHelp, func() parsedCmd { return &analyzeCmd{} }),
		"capture":   parsed("slow log, general log or pcap into a capture file; fingerprints; --to-workload", "capture", captureHelp, func() parsedCmd { return &captureCmd{} }),
		"mirror":    parsed("a proxy: clients served by the control, their reads compared on candidates, live", "mirror", mirrorHelp, func() parsedCmd { return &mirrorCmd{} }),
		"replay":    parsed("replay a capture on a control and candidates; compare results, errors, latency", "replay", replayHelp, func() parsedCmd { return &replayCmd{} }),
		"rehearse":  parsed("one plan rehearses a migration: check, copy, follow, verify, analyze, vars, replay, sweep, capacity, cutover, then readiness", "rehearse", rehearseHelp, func() parsedCmd { return &rehearseCmd{} }),
		"version":   {"print the version and the commit it was built from", runVersion},
		"sysbench":  {"a sysbench command line: sysbench WORKLOAD [options] prepare|run|cleanup", runSysbench},
	}
}

// Version is the release number printed in headers and stored in results.
var Version = version.Number

// Main runs one command line and returns the process exit code.
func Main(ctx context.Context, env *Env, args []string) int {
	err := dispatch(ctx, env, args)
	if err == nil {
		return ExitOK
	}
	switch {
	case errors.Is(err, errUsageShown):
		return ExitUsage
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

// errUsageShown is bad usage already answered with the help text.
var errUsageShown = errors.New("usage shown")

func dispatch(ctx context.Context, env *Env, args []string) error {
	cmds := commands()
	if len(args) == 0 {
		// As git does: the help, and a status that tells a script nothing ran.
		printUsage(env.Stderr, cmds)
		return errUsageShown
	}
	switch args[0] {
	case "help", "-h", "--help":
		if len(args) == 1 {
			printUsage(env.Stdout, cmds)
			return nil
		}
		return help(ctx, env, cmds, args[1])
	case "--version", "-v", "-V":
		return cmds["version"].run(ctx, env, nil)
	}
	if c, ok := cmds[args[0]]; ok {
		return c.run(ctx, env, args[1:])
	}
	// sysbench's order without the word sysbench: WORKLOAD [options] COMMAND.
	if verb := args[len(args)-1]; isBenchVerb(verb) && len(args) > 1 {
		rest := append([]string{}, args[:len(args)-1]...)
		return (&benchCmd{verb: verb}).run(ctx, env, rest)
	}
	return unknownCommand(cmds, args[0])
}

// help answers "shakedown help TOPIC": a command's own help, or a topic.
func help(ctx context.Context, env *Env, cmds map[string]command, topic string) error {
	if t, ok := topics[topic]; ok {
		_, err := fmt.Fprint(env.Stdout, t)
		return err
	}
	c, ok := cmds[topic]
	if !ok {
		return unknownCommand(cmds, topic)
	}
	return c.run(ctx, env, []string{"--help"})
}

// unknownCommand says that name is not a command, and which one was meant.
func unknownCommand(cmds map[string]command, name string) error {
	names := commandNames(cmds)
	if strings.HasPrefix(name, "-") {
		return usagef("%s: options come after the command: shakedown COMMAND [options] (shakedown help lists the commands)", name)
	}
	if _, _, found := bench.FindWorkload([]string{name}); found {
		return usagef("%s is a workload: shakedown run %s [options] (or prepare, cleanup)", name, name)
	}
	if s := suggest.Closest(name, names); s != "" {
		return usagef("unknown command %q (did you mean %q?); shakedown help lists the commands", name, s)
	}
	return usagef("unknown command %q; commands: %s", name, strings.Join(names, ", "))
}

// flagError is a command's option error in one line (the option, what is
// wrong, the option meant): bad usage, exit 2. what names the command in
// the message, cmd in the pointer to its help.
func flagError(what, cmd string, fs *pflag.FlagSet, err error) error {
	return usagef("%s: %s", what, sbflag.Explain(fs, err, "shakedown "+cmd+" --help"))
}

// sectioned is a command whose many options its help lists in sections.
type sectioned interface {
	helpSections() []sbflag.Section
}

// parseFlags parses a subcommand's flags. On --help it prints usage and the
// flags (in sections, where given) and returns help true; a bad flag is a
// usage error with a "did you mean" where one is near.
func parseFlags(env *Env, fs *pflag.FlagSet, args []string, cmd, usage string, sections ...sbflag.Section) (help bool, err error) {
	err = fs.Parse(sbflag.JoinOptional(fs, args))
	switch {
	case err == nil && !helpFlag(fs):
		return false, nil
	case err == nil || errors.Is(err, pflag.ErrHelp):
		if len(sections) == 0 {
			_, err = fmt.Fprint(env.Stdout, usage, fs.FlagUsages())
			return true, err
		}
		fmt.Fprint(env.Stdout, strings.TrimSuffix(usage, "\nOptions:\n"))
		sbflag.WriteSections(env.Stdout, fs, sections)
		return true, nil
	}
	return false, flagError(cmd, cmd, fs, err)
}

// helpFlag reports whether fs has a --help flag of its own, listed in
// its usage, and it was given.
func helpFlag(fs *pflag.FlagSet) bool {
	h := fs.Lookup("help")
	return h != nil && h.Value.String() == "true"
}

// runVersion is "shakedown version" (also --version, -v).
func runVersion(ctx context.Context, env *Env, args []string) error {
	if len(args) > 0 {
		if args[0] == "--help" || args[0] == "-h" {
			_, err := fmt.Fprint(env.Stdout, versionHelp)
			return err
		}
		return usagef("version: unexpected argument %q: version takes none", args[0])
	}
	_, err := fmt.Fprintln(env.Stdout, "shakedown", version.String())
	return err
}

func isBenchVerb(s string) bool { return s == "prepare" || s == "run" || s == "cleanup" }

// runSysbench is "shakedown sysbench WORKLOAD [options] COMMAND": a
// sysbench command line with shakedown in front of it.
func runSysbench(ctx context.Context, env *Env, args []string) error {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" {
		_, err := fmt.Fprint(env.Stdout, sysbenchHelp)
		return err
	}
	if len(args) == 1 && (args[0] == "--version" || args[0] == "-v") {
		_, err := fmt.Fprintf(env.Stdout, "shakedown %s (sysbench 1.0.20-compatible)\n", Version)
		return err
	}
	verb := args[len(args)-1]
	if !isBenchVerb(verb) {
		wl, _, _ := bench.FindWorkload(args)
		if wl == "" {
			wl = "WORKLOAD"
		}
		return usagef("sysbench: end the line with the command, prepare, run or cleanup, as sysbench does: shakedown sysbench %s [options] run", wl)
	}
	return (&benchCmd{verb: verb}).run(ctx, env, args[:len(args)-1])
}

func commandNames(cmds map[string]command) []string { return slices.Sorted(maps.Keys(cmds)) }

// printUsage is shakedown's own help: the commands by job, as commandGroups
// groups them.
func printUsage(w io.Writer, cmds map[string]command) {
	fmt.Fprint(w, usageHelp)
	writeCommands(w, commandNames(cmds), func(n string) string { return cmds[n].summary })
	fmt.Fprint(w, firstStepsHelp)
}
