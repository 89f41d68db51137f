package ioloop

// Tuning replaces rules of a group's loops for a benchmark that measures a
// rule against what it replaced (the client's I/O plan carries it, from
// the SHAKEDOWN_IOLOOP_* variables). Its zero value is the rules.
type Tuning struct {
	// Burst, above 0, is how many ready descriptors one epoll_wait takes
	// (see defaultBurst).
	Burst int
	// Watch, On or Off, replaces HoldProcessors' rule for whether held
	// loops are watched and wait with no timeout: On watches loops as
	// many as the CPUs too (with a processor more for the watch).
	Watch Switch
	// HoldOff makes loops that HoldProcessors holds wait the ordinary way
	// all the same, giving their processor away: the baseline that
	// holding is measured against. The rest of holding (GOMAXPROCS
	// raised, the watch) is as it would be.
	HoldOff bool
}

// Switch is a benchmark's answer in place of a rule's: ByRule (the zero
// value) leaves the rule to answer.
type Switch uint8

const (
	ByRule Switch = iota
	On
	Off
)

// String is "on", "off" or "" (ByRule).
func (s Switch) String() string {
	switch s {
	case On:
		return "on"
	case Off:
		return "off"
	}
	return ""
}

// Or is the answer: s's, or rule's where s is ByRule.
func (s Switch) Or(rule bool) bool {
	switch s {
	case On:
		return true
	case Off:
		return false
	}
	return rule
}

// defaultBurst is how many ready descriptors one epoll_wait of a loop
// takes, and so how many tasks at most send their next statements back to
// back before the loop asks the kernel again. Tuning.Burst replaces it, for
// a benchmark that asks whether the bursts make a server's threads contend
// (docs/PERFORMANCE.md, "Bursts at 3000 threads").
const defaultBurst = 256

func (t Tuning) burst() int {
	if t.Burst > 0 {
		return t.Burst
	}
	return defaultBurst
}
