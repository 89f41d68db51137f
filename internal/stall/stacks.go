package stall

import (
	"bufio"
	"context"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/result"
)

// stacksTimeout bounds gdb: reading a few hundred threads takes seconds.
const stacksTimeout = 60 * time.Second

// Stacks reads every thread's stack of the local process pid with gdb and
// aggregates them as pt-pmp does: each thread's function names joined by
// ",", identical stacks counted, the commonest first. gdb stops the
// process while it reads: the section's PauseMS is how long. It is for a
// server on this machine only, and only on its own flag.
func Stacks(ctx context.Context, pid int) (sec result.StallSection) {
	sec = result.StallSection{Name: "stacks", Source: fmt.Sprintf("gdb -p %d -batch -ex 'thread apply all bt'", pid)}
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		sec.Error = "gdb is not installed: install gdb for --stall-stacks"
		return sec
	}
	ctx, cancel := context.WithTimeout(ctx, stacksTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, gdb, "-p", strconv.Itoa(pid), "-batch", "-nx", "-ex", "set pagination 0", "-ex", "thread apply all bt")
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	out, err := cmd.Output()
	sec.PauseMS = msSince(start)
	sec.ReadMS = sec.PauseMS
	sec.Columns = []string{"threads", "stack"}
	sec.Rows = parseStacks(string(out))
	if len(sec.Rows) == 0 {
		why := "gdb read no stacks"
		if err != nil {
			why = readError(ctx, err)
		}
		sec.Error = fmt.Sprintf("%s (is ptrace allowed? kernel.yama.ptrace_scope, or run as the server's user)", why)
	}
	return sec
}

// parseStacks aggregates gdb's "thread apply all bt" output: rows of
// [count, stack], the commonest stack first, ties by stack.
func parseStacks(out string) [][]string {
	counts := map[string]int{}
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			counts[strings.Join(cur, ",")]++
		}
		cur = nil
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "Thread "):
			flush()
		case strings.HasPrefix(line, "#"):
			if fn := frameFunction(line); fn != "" {
				cur = append(cur, fn)
			}
		}
	}
	flush()
	rows := make([][]string, 0, len(counts))
	for st, n := range counts {
		rows = append(rows, []string{strconv.Itoa(n), st})
	}
	sort.Slice(rows, func(i, j int) bool {
		a, _ := strconv.Atoi(rows[i][0])
		b, _ := strconv.Atoi(rows[j][0])
		if a != b {
			return a > b
		}
		return rows[i][1] < rows[j][1]
	})
	return rows
}

// frameFunction is the function of one frame line, "#3  0x00.. in
// name (args) at file" or "#0  name (args) at file", without its
// arguments; "??" where gdb does not know it.
func frameFunction(line string) string {
	f := strings.Fields(line)
	if len(f) < 2 || !strings.HasPrefix(f[0], "#") {
		return ""
	}
	rest := strings.TrimSpace(strings.TrimPrefix(line, f[0]))
	if strings.HasPrefix(rest, "0x") {
		_, after, ok := strings.Cut(rest, " in ")
		if !ok {
			return ""
		}
		rest = after
	}
	if i := strings.IndexAny(rest, " ("); i >= 0 {
		rest = rest[:i]
	}
	return rest
}
