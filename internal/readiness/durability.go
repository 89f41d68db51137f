package readiness

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shakedown/shakedown/internal/store"
	"github.com/shakedown/shakedown/internal/vars"
)

// Downgrade is one variable in which the target is less durable than the
// source (the control): commits it acknowledged can be lost, or pages
// corrupted, in a crash that the source would have come through.
type Downgrade struct {
	Variable string `json:"variable"`
	Source   string `json:"source"` // the source's value, as it gave it
	Target   string `json:"target"` // the target's
	Risk     string `json:"risk"`   // what the target's value risks
}

// durability says, for a variable, what the candidate's value risks when
// it is less durable than the control's, and ok false when it is not (or
// either value is one it does not know). Values are normalised
// (vars.Normalize).
var durability = map[string]func(control, candidate string) (risk string, ok bool){
	// 1 (and MariaDB's 3) write and sync the redo log at every commit; 2
	// writes at commit and syncs once a second, so the server's own crash
	// loses nothing but the machine's does; 0 does both once a second.
	"innodb_flush_log_at_trx_commit": func(control, candidate string) (string, bool) {
		level := map[string]int{"0": 0, "2": 1, "1": 2, "3": 2}
		a, okA := level[control]
		b, okB := level[candidate]
		if !okA || !okB || b >= a {
			return "", false
		}
		if candidate == "0" {
			return "up to a second of commits lost in a crash, the server's own included (the redo log is written and synced once a second, innodb_flush_log_at_timeout)", true
		}
		return "up to a second of commits lost in a crash of the machine or a power loss (the redo log is synced once a second, innodb_flush_log_at_timeout)", true
	},
	// sync_binlog N syncs the binary log every N commit groups, 0 never
	// (the operating system decides): a larger interval is less durable.
	"sync_binlog": func(control, candidate string) (string, bool) {
		interval := func(v string) (uint64, bool) {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, false
			}
			if n == 0 {
				return ^uint64(0), true
			}
			return n, true
		}
		a, okA := interval(control)
		b, okB := interval(candidate)
		if !okA || !okB || b <= a {
			return "", false
		}
		what := "the binary log is synced when the operating system decides"
		if candidate != "0" {
			what = "the binary log is synced every " + candidate + " commit groups"
		}
		return what + ": commits lost from it in a crash of the machine or a power loss, so that replicas and point-in-time recovery can disagree with the data", true
	},
	// Without the doublewrite buffer (or with MySQL's detect_only) a page
	// torn by a crash mid-write cannot be repaired.
	"innodb_doublewrite": func(control, candidate string) (string, bool) {
		protects := map[string]bool{"1": true, "detect_and_recover": true, "fast": true, "0": false, "detect_only": false}
		a, okA := protects[control]
		b, okB := protects[candidate]
		if !okA || !okB || !a || b {
			return "", false
		}
		return "pages torn by a crash cannot be repaired: a crash can leave tables corrupt", true
	},
	// nosync never syncs InnoDB's data files.
	"innodb_flush_method": func(control, candidate string) (string, bool) {
		if candidate != "nosync" || control == "nosync" {
			return "", false
		}
		return "InnoDB's files are never synced: a crash of the machine or a power loss can lose or corrupt data", true
	},
}

// Downgrades are the variables of a diff (the source's values first, the
// target's second) in which the target is less durable than the source,
// in the diff's order.
func Downgrades(diffs []vars.Difference) []Downgrade {
	out := []Downgrade{}
	for _, d := range diffs {
		judge, ok := durability[d.Name]
		// Not Relevant: a server's flavour ignores the variable (TiDB keeps
		// sync_binlog for compatibility and has no binlog to sync), and its
		// value says nothing of what a commit waits for.
		if !ok || d.Equal || !d.Relevant || len(d.Values) < 2 || d.Values[0] == vars.Missing || d.Values[1] == vars.Missing {
			continue
		}
		if risk, ok := judge(vars.Normalize(d.Values[0]), vars.Normalize(d.Values[1])); ok {
			out = append(out, Downgrade{Variable: d.Name, Source: d.Values[0], Target: d.Values[1], Risk: risk})
		}
	}
	return out
}

// JudgeVariables weighs a variables diff of the source (first) and a
// target, for the readiness page and the rehearsal's vars step alike,
// so that the two always agree: a durability downgrade warns, naming each
// variable; other differences pass, counted (the check weighs those that
// change results, the sweep those that change speed). The outcome is a
// store outcome.
func JudgeVariables(diffs []vars.Difference) (outcome, summary string, downgrades []Downgrade) {
	differing, relevant, oneSide := 0, 0, 0
	for _, d := range diffs {
		switch {
		case d.Equal:
		case d.OneSide:
			oneSide++
		default:
			differing++
			if d.Relevant {
				relevant++
			}
		}
	}
	summary = fmt.Sprintf("%d differing, %d of them known to change behaviour or performance", differing, relevant)
	if oneSide > 0 {
		summary += fmt.Sprintf("; %d only on one side", oneSide)
	}
	downgrades = Downgrades(diffs)
	if len(downgrades) == 0 {
		if differing > 0 {
			summary += ", none less durable than the source's"
		}
		return store.OutcomePass, summary, downgrades
	}
	named := make([]string, len(downgrades))
	for i, d := range downgrades {
		named[i] = fmt.Sprintf("%s %s -> %s", d.Variable, d.Source, d.Target)
	}
	return store.OutcomeWarn, "less durable than the source: " + strings.Join(named, ", ") + "; " + summary, downgrades
}
