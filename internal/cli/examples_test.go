package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/sbflag"
	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/sweep"
	"github.com/shakedown/shakedown/internal/target"
	"github.com/shakedown/shakedown/internal/wire/wiretest"
	"github.com/shakedown/shakedown/internal/workload"
)

// An example is a command line that the README, a page under docs/, a
// help text or the tool's own output shows a user, with where it was found.
type example struct {
	where string
	line  string
	// usage: the example shows bad usage on purpose (exit 2, as the
	// page says after it); it runs against the live server.
	usage bool
	// plan: the plan the page showed last before the example ("$ cat
	// plan.yaml"), written as plan.yaml before it runs; "" for the
	// runner's default plan.
	plan string
}

// exampleRunner runs examples in a directory of their own that holds the
// files they name. Targets are rewritten to a port where nothing listens,
// so that a command line that parses ends with exit 1 (the server cannot
// be reached) before any load, and one that does not parse ends with 2.
type exampleRunner struct {
	dir        string
	outputs    []example // what the commands printed, where, for suggestions
	live, down string    // host:port of the test server, and of nothing
	store      string    // a store with runs named today and tomorrow, and a sweep
	plan       string    // plan.yaml for an example that shows none
	env        map[string]string
}

func newExampleRunner(t *testing.T) *exampleRunner {
	t.Helper()
	live := sandboxtest.URL(t)
	tg, err := target.Parse(live)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := l.Addr().String()
	l.Close()
	x := &exampleRunner{dir: t.TempDir(), live: tg.Endpoints()[0].String(), down: down,
		env: map[string]string{"SHAKEDOWN_HOME": "", "RELAXED_PW": "x"}}
	x.env["SHAKEDOWN_HOME"] = filepath.Join(x.dir, "home")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(x.dir)

	must := func(args ...string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		code, out, errOut := runCLIEnv(ctx, x.env, args...)
		if code != 0 {
			t.Fatalf("fixture %v: exit %d\n%s%s", args, code, out, errOut)
		}
		x.outputs = append(x.outputs, example{where: strings.Join(args, " "), line: out + errOut})
	}
	x.write("slow.log", "# Time: 261122 21:56:55\n# User@Host: a[a] @  [127.0.0.1]\n# Thread_id: 4  Schema: sbtest  QC_hit: No\n"+
		"# Query_time: 0.1  Lock_time: 0.0  Rows_sent: 1  Rows_examined: 1\nSET timestamp=1;\nSELECT 1;\n")
	must("capture", "slow.log", "-o", "app.capture", "--to-workload", "app.sql")
	x.write("orders.sql", "SELECT 1;\n")
	x.write("load.sql", "SELECT 1;\n")
	x.write("prod.jsonl", `{"time":"2026-11-26T03:45:28Z","t_s":1,"elapsed_s":1,"v":{"qps":312.4,"tps":0}}`+"\n") // what watch --json wrote
	x.write("schema.sql", "CREATE TABLE IF NOT EXISTS examples_t (id INT PRIMARY KEY);\n")
	// The README's tcpdump -x example reads the text tcpdump wrote.
	dump, err := os.ReadFile(filepath.Join(wd, "..", "capture", "testdata", "pcap", "midstream.x.txt"))
	if err != nil {
		t.Fatal(err)
	}
	x.write("mysql.txt", string(dump))
	// The README's rehearsal runs the example plan, its servers down.
	rehearsal, err := os.ReadFile(filepath.Join(wd, "..", "demo", "rehearsal", "rehearsal.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	x.write("rehearsal.yaml", urlHostRE.ReplaceAllString(string(rehearsal), "${1}"+x.down))
	// The plan's copy: section, in one line of its own, without allow-write
	// and with a misspelt option.
	copyRE := regexp.MustCompile(`(?m)^  copy:.*\n(    .*\n)*`)
	x.write("copy.yaml", copyRE.ReplaceAllString(urlHostRE.ReplaceAllString(string(rehearsal), "${1}"+x.down),
		"  copy: {where: \"app.orders: id < 100\"}\n"))
	x.write("copy2.yaml", copyRE.ReplaceAllString(urlHostRE.ReplaceAllString(string(rehearsal), "${1}"+x.down),
		"  copy: {allow-write: true, thread: 4, where: \"app.orders: id < 100\"}\n"))
	x.write("queries.sql", "SELECT 1;\n")
	// mirror.md's TLS example: its certificate, its key and its accounts.
	leaf := wiretest.NewCA(t).Server(t, "192.0.2.2")
	x.write("mirror.pem", string(leaf.CertPEM))
	x.write("mirror-key.pem", string(leaf.KeyPEM))
	x.write("accounts.txt", "app:app-pw\n")
	x.store = filepath.Join(x.dir, "fixture.db")
	for _, name := range []string{"today", "tomorrow"} {
		must("run", "ping", "--target", live, "--name", name, "--time", "1", "--store", x.store)
	}
	x.write("fixture-plan.yaml", fmt.Sprintf("targets:\n  - name: a\n    url: %s\n    role: control\nworkloads: [ping]\nthreads: [1]\ntime: 1\nrepeats: 3\n", live))
	must("sweep", "fixture-plan.yaml", "--store", x.store)
	// readiness and report read the default store when not given one.
	b, err := os.ReadFile(x.store)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(x.env["SHAKEDOWN_HOME"], 0o755); err != nil {
		t.Fatal(err)
	}
	x.write(filepath.Join("home", "shakedown.db"), string(b))
	return x
}

func (x *exampleRunner) write(name, text string) {
	if err := os.WriteFile(filepath.Join(x.dir, name), []byte(text), 0o600); err != nil {
		panic(err)
	}
}

// urlHostRE is the host:port part of a target URL.
var urlHostRE = regexp.MustCompile(`(mysql://(?:[^@/\s'"]*@)?)[^/\s?'"]*`)

// placeholders are the words help texts and suggestions put where a user
// puts a value of their own.
func (x *exampleRunner) placeholder(word, host string) (string, bool) {
	switch word {
	case "URL", "SOURCE", "TARGET", "CONTROL", "CANDIDATE":
		return "mysql://shakedown@" + host + "/sbtest", true
	case "CAPTURE":
		return "app.capture", true
	case "SOURCE-LOG":
		return "slow.log", true
	case "PLAN.yaml":
		return "plan.yaml", true
	case "DB,...":
		return "sbtest", true
	case "ID", "ID,...":
		return "1", true
	case "NAME":
		return "nightly", true
	case "FILE":
		return "out.file", true
	case "WORKLOAD":
		return "oltp_point_select", true
	case "QPS":
		return "1200", true
	}
	return word, false
}

// args turns an example into the arguments of one shakedown command, with
// targets pointed at host; ok is false for a line that is not one (cat,
// make, a loop's shell).
func (x *exampleRunner) args(line, host string) (args []string, env map[string]string, ok bool) {
	words, err := shellWords(line)
	if err != nil || len(words) == 0 {
		return nil, nil, false
	}
	env = map[string]string{}
	for k, v := range x.env {
		env[k] = v
	}
	for len(words) > 0 && regexp.MustCompile(`^[A-Z_]+=`).MatchString(words[0]) {
		k, v, _ := strings.Cut(words[0], "=")
		env[k] = v
		words = words[1:]
	}
	if len(words) == 0 || (words[0] != "shakedown" && words[0] != "bin/shakedown") {
		return nil, nil, false
	}
	_, port, _ := net.SplitHostPort(host)
	for _, w := range words[1:] {
		if p, ok := x.placeholder(w, host); ok {
			w = p
		}
		w = urlHostRE.ReplaceAllString(w, "${1}"+host)
		switch {
		case regexp.MustCompile(`^-P\d+$`).MatchString(w):
			w = "-P" + port
		case strings.HasPrefix(w, "--mysql-port="):
			w = "--mysql-port=" + port
		}
		args = append(args, w)
	}
	// A store an example names is the fixture's, under that name. One
	// under /tmp was on the machine that ran the example: it becomes a path
	// under the test's directory, so that the test neither depends on nor
	// writes to what that machine had (other absolute paths, such as an
	// unwritable one shown on purpose, stay as they are).
	for i, a := range args {
		path, at := "", -1
		switch {
		case a == "--store" && i+1 < len(args):
			path, at = args[i+1], i+1
		case strings.HasPrefix(a, "--store="):
			path, at = strings.TrimPrefix(a, "--store="), i
		}
		if path != "" && !strings.Contains(path, "://") && strings.HasPrefix(path, "/tmp/") && !strings.HasPrefix(path, x.dir+string(filepath.Separator)) {
			path = filepath.Join(x.dir, "abs", filepath.Base(filepath.Dir(path)), filepath.Base(path))
			if at == i {
				args[at] = "--store=" + path
			} else {
				args[at] = path
			}
		}
		if path != "" && !strings.Contains(path, "://") {
			if _, err := os.Stat(path); err != nil {
				if b, err := os.ReadFile(x.store); err == nil {
					os.MkdirAll(filepath.Dir(path), 0o755)
					os.WriteFile(path, b, 0o600)
				}
			}
		}
	}
	return args, env, true
}

// dataMessages are failures of a command line that parsed, over data the
// fixture does not hold (a bisect result, a series): bad input for the
// user, but proof that the options and arguments were read.
var dataMessages = []string{"--bisect", "no successful runs", "holds no interrupted sweep", "nothing to resume", "no sandbox \"", "among the runs; they are of"}

// try runs one example and checks that it parses: exit 2 only where the
// example shows bad usage on purpose.
func (x *exampleRunner) try(t *testing.T, ex example) {
	t.Helper()
	host := x.down
	if ex.usage {
		host = x.live
	}
	args, env, ok := x.args(ex.line, host)
	if !ok {
		return
	}
	plan := ex.plan
	if plan == "" {
		plan = x.plan
	}
	x.write("plan.yaml", urlHostRE.ReplaceAllString(plan, "${1}"+x.down))
	if parsed, err := parseOnly(args); parsed {
		if err != nil {
			t.Errorf("%s: %s: %v", ex.where, ex.line, err)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code, out, errOut := runCLIEnv(ctx, env, args...)
	t.Logf("%s: exit %d: %q", ex.where, code, args)
	x.outputs = append(x.outputs, example{where: ex.where, line: out + errOut})
	switch {
	case ex.usage && code == ExitFailure && args[0] == "sweep":
		// The bad usage a sweep shows is in what its targets hold (tables
		// with rows that prepare would drop), and its plan's targets are
		// the port where nothing listens: the plan parsed.
	case ex.usage && code != ExitUsage:
		t.Errorf("%s: %s\ngot exit %d, want %d as shown\nstderr: %s", ex.where, ex.line, code, ExitUsage, errOut)
	case !ex.usage && code == ExitUsage && !containsAny(errOut, dataMessages):
		t.Errorf("%s: %s\ngot exit %d (bad usage): the example does not parse\nran: %q\nstderr: %s", ex.where, ex.line, code, args, errOut)
	}
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// parseOnly reads the command lines that would start servers (sandbox up,
// demo) or need one that exists (sandbox stop NAME) with their own flags,
// without running them. parsed is false for every other command.
func parseOnly(args []string) (parsed bool, err error) {
	switch {
	case args[0] == "demo":
		fs := (&demoCmd{}).flags()
		if err := fs.Parse(args[1:]); err != nil {
			return true, err
		}
		if fs.NArg() != 0 {
			return true, fmt.Errorf("demo takes no arguments, got %q", fs.Args())
		}
		return true, nil
	case args[0] == "sandbox" && len(args) > 1 && args[1] != "list":
		// up has its flags; start has --url-only; stop and down none.
		fs := (&sandboxCmd{}).flags()
		if args[1] != "up" {
			fs = sbflag.NewFlagSet("sandbox " + args[1])
			if args[1] == "start" {
				fs.Bool("url-only", false, "")
			}
		}
		if err := fs.Parse(args[2:]); err != nil {
			return true, err
		}
		if fs.NArg() != 1 {
			return true, fmt.Errorf("sandbox %s takes one NAME, got %q", args[1], fs.Args())
		}
		return true, nil
	}
	return false, nil
}

// shellWords splits a command line as a POSIX shell would, up to the first
// pipe, redirection, ; or &&.
func shellWords(line string) ([]string, error) {
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(line[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("unclosed quote in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '"':
			j := strings.IndexByte(line[i+1:], '"')
			if j < 0 {
				return nil, fmt.Errorf("unclosed quote in %q", line)
			}
			cur.WriteString(line[i+1 : i+1+j])
			i += j + 1
			inWord = true
		case c == '|' || c == ';' || c == '>' || c == '&' || (c == '2' && !inWord && i+1 < len(line) && line[i+1] == '>'):
			if inWord {
				words = append(words, cur.String())
			}
			return words, nil
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

// docPages are the pages whose examples TestExamples runs: the README and
// every page under docs/, in that order.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(pages) == 0 {
		t.Fatalf("no pages under docs/ (%v)", err)
	}
	return append([]string{"../../README.md"}, pages...)
}

// docExamples reads the indented blocks of the README and of every page
// under docs/: each "$ shakedown" line (and a loop body's "> shakedown"),
// joined over a trailing \, and the plans shown with "$ cat plan.yaml".
// An example goes with the plan its page showed last before it, or, on a
// page that has shown none yet, with the last plan of the pages before. A
// command whose block then says "$ echo $?" and 2 shows bad usage. plans
// are the plans shown, each as a dry run of its own.
func docExamples(t *testing.T) (exs, plans []example) {
	t.Helper()
	plan := ""
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(page, "../../")
		lines := strings.Split(string(b), "\n")
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			if !strings.HasPrefix(l, "    $ ") && !strings.HasPrefix(l, "    > ") {
				continue
			}
			cmd := strings.TrimSpace(l[6:])
			if cmd == "cat plan.yaml" {
				start := i + 1
				var p []string
				for i+1 < len(lines) && strings.HasPrefix(lines[i+1], "    ") && !strings.HasPrefix(lines[i+1], "    $ ") {
					i++
					p = append(p, lines[i][4:])
				}
				plan = strings.Join(p, "\n") + "\n"
				plans = append(plans, example{where: fmt.Sprintf("%s:%d plan", name, start), line: "shakedown sweep plan.yaml --dry-run", plan: plan})
				continue
			}
			start := i + 1
			for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
				i++
				cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(lines[i])
			}
			ex := example{where: fmt.Sprintf("%s:%d", name, start), line: cmd, plan: plan}
			// What the block shows next: output, then perhaps "$ echo $?".
			for j := i + 1; j < len(lines) && strings.HasPrefix(lines[j], "    "); j++ {
				if strings.HasPrefix(lines[j], "    $ ") {
					if strings.TrimSpace(lines[j]) == "$ echo $?" && j+1 < len(lines) && strings.TrimSpace(lines[j+1]) == "2" {
						ex.usage = true
					}
					break
				}
				if strings.Contains(lines[j], "unknown option") {
					ex.usage = true
				}
			}
			exs = append(exs, ex)
		}
	}
	return exs, plans
}

// helpTexts are every help the command line prints: the overview, each
// command's, each topic's and each workload's.
func helpTexts(t *testing.T) map[string]string {
	t.Helper()
	texts := map[string]string{}
	add := func(args ...string) {
		code, out, errOut := runCLI(context.Background(), args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		texts[strings.Join(args, " ")] = out
	}
	add("help")
	for name := range commands() {
		add(name, "--help")
	}
	add("vars", "bisect", "--help")
	for name := range topics {
		add("help", name)
	}
	for _, w := range workload.Names() {
		add("run", w, "--help")
	}
	return texts
}

// helpExamples are the command lines a help text shows as examples: an
// indented line that starts with "shakedown", joined over a trailing \,
// without a trailing remark in parentheses. Synopses ([options], a|b)
// are not examples.
func helpExamples(texts map[string]string) []example {
	var exs []example
	for where, text := range texts {
		lines := strings.Split(text, "\n")
		for i := 0; i < len(lines); i++ {
			l := lines[i]
			if !strings.HasPrefix(l, " ") || !strings.HasPrefix(strings.TrimSpace(l), "shakedown ") {
				continue
			}
			cmd := strings.TrimSpace(l)
			for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
				i++
				cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(lines[i])
			}
			if k := strings.Index(cmd, "  ("); k >= 0 {
				cmd = strings.TrimSpace(cmd[:k])
			}
			if strings.ContainsAny(cmd, "[]|") || strings.Contains(cmd, "...") {
				continue
			}
			exs = append(exs, example{where: "shakedown " + where, line: cmd})
		}
	}
	return exs
}

// helpPlan is the plan sweep --help shows, as a file.
func helpPlan(t *testing.T, texts map[string]string) string {
	t.Helper()
	text := texts["sweep --help"]
	_, after, ok := strings.Cut(text, "A plan:\n\n")
	if !ok {
		t.Fatal("sweep --help shows no plan after \"A plan:\"")
	}
	plan, _, _ := strings.Cut(after, "\nOptions:")
	var b strings.Builder
	for _, l := range strings.Split(plan, "\n") {
		b.WriteString(strings.TrimPrefix(l, "  ") + "\n")
	}
	return b.String()
}

// TestExamples runs every example of the README, of the pages under
// docs/ and of the help texts, and the plans they show, as a user would
// type them: each must parse (exit 2 only where it shows bad usage on
// purpose). The targets they name are pointed at a port where nothing
// listens, so nothing is loaded.
func TestExamples(t *testing.T) {
	texts := helpTexts(t)
	docs, plans := docExamples(t) // before the runner moves to its directory
	x := newExampleRunner(t)
	if len(plans) == 0 {
		t.Fatal("README.md and docs/ show no plan (\"$ cat plan.yaml\")")
	}
	x.plan = plans[0].plan
	x.write("help-plan.yaml", urlHostRE.ReplaceAllString(helpPlan(t, texts), "${1}"+x.down))
	exs := append(docs, helpExamples(texts)...)
	exs = append(exs, plans...)
	exs = append(exs, example{where: "sweep --help plan", line: "shakedown sweep help-plan.yaml --dry-run"})
	perPage := map[string]int{}
	for _, ex := range docs {
		page, _, _ := strings.Cut(ex.where, ":")
		perPage[page]++
	}
	t.Logf("examples per page: %v", perPage)
	if perPage["README.md"] < 5 || len(docs) < 100 {
		t.Fatalf("got %d examples in README.md and %d in all, want the 5 and 100 and more they show: is the extraction broken?", perPage["README.md"], len(docs))
	}
	for _, ex := range exs {
		x.try(t, ex)
	}

	// An interrupted sweep says how to continue it.
	st, err := store.Open(context.Background(), x.store)
	if err != nil {
		t.Fatal(err)
	}
	err = finishSweep(context.Background(), &Env{Stdout: io.Discard}, st, &sweep.Summary{SweepID: 1, OK: 1, Steps: 3}, sweep.ErrInterrupted, nil)
	st.Close()
	if err == nil {
		t.Fatal("an interrupted sweep: got no error, want one that says how to resume")
	}
	x.outputs = append(x.outputs, example{where: "an interrupted sweep", line: err.Error()})

	// What the commands printed suggests command lines of its own: each
	// must parse as well, as the user will paste it.
	sugs := suggestions(x.outputs)
	for _, want := range []string{"shakedown check ", "shakedown verify ", "shakedown replay ", "shakedown sweep ", "shakedown report ", "shakedown run sql ", "shakedown sweep --resume"} {
		found := false
		for _, s := range sugs {
			found = found || strings.HasPrefix(s.line, want)
		}
		if !found {
			t.Errorf("no output suggested %q...: the scenarios no longer reach the suggestions they are there for", want)
		}
	}
	for _, s := range sugs {
		x.try(t, s)
	}
}

// suggestionRE finds a command line the tool suggests: after "run: ",
// "run it with: ", "continue it with ", "full report: " or "; ", or in
// parentheses, up to the end of the line, a parenthesis or a ';'.
var suggestionRE = regexp.MustCompile(`(?:run: |run it with: |continue it with |full report: |; |\()(shakedown [a-z]+[^()\n;]*)`)

// suggestions are the command lines in outputs, each once.
func suggestions(outputs []example) []example {
	seen := map[string]bool{}
	var out []example
	for _, o := range outputs {
		for _, m := range suggestionRE.FindAllStringSubmatch(o.line, -1) {
			line := strings.TrimRight(m[1], " .,")
			if seen[line] {
				continue
			}
			seen[line] = true
			out = append(out, example{where: "suggested by " + o.where, line: line})
		}
	}
	return out
}

// otherPrograms' options are named on the pages but are not shakedown's.
var otherPrograms = []string{"--enable-feature"}

// TestDocOptions checks the Options section of every page under docs/:
// each --option it names is one that the help of a command its Synopsis
// shows (or run's, whose options several commands take) prints, so that a
// renamed or removed option does not live on in the pages.
func TestDocOptions(t *testing.T) {
	texts := helpTexts(t)
	pages := docPages(t)[1:]
	checked := 0
	optRE := regexp.MustCompile("`(--[a-z][a-z0-9-]*)")
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		_, options, ok := strings.Cut(text, "\n## Options\n")
		_, synopsis, hasSynopsis := strings.Cut(text, "\n## Synopsis\n")
		if !ok || !hasSynopsis {
			continue
		}
		options, _, _ = strings.Cut(options, "\n## ")
		synopsis, _, _ = strings.Cut(synopsis, "\n## ")
		help := texts["run --help"]
		for _, l := range strings.Split(synopsis, "\n") {
			words := strings.Fields(l)
			if len(words) < 2 || words[0] != "shakedown" {
				continue
			}
			help += texts[words[1]+" --help"]
			if len(words) > 2 {
				help += texts[words[1]+" "+words[2]+" --help"]
			}
		}
		for _, m := range optRE.FindAllStringSubmatch(options, -1) {
			checked++
			named := regexp.MustCompile(regexp.QuoteMeta(m[1]) + `([^a-z0-9-]|$)`)
			if !named.MatchString(help) && !slices.Contains(otherPrograms, m[1]) {
				t.Errorf("%s: Options names %s: got no such option in the help of the commands its Synopsis shows, want the options as they are", strings.TrimPrefix(page, "../../"), m[1])
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d options in docs/: want the 100 and more the pages name: is the extraction broken?", checked)
	}
}
