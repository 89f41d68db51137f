package result

import (
	"fmt"
	"strings"

	"github.com/shakedown/shakedown/internal/stats"
)

// KernelCounters are the host's kernel counters over the measured samples
// of a run against a local server: what swapping, a full SYN backlog, a
// full accept queue and thread switching cost while it ran.
type KernelCounters struct {
	SwapIns         float64 `json:"swap_ins"`
	SyncookiesSent  float64 `json:"syncookies_sent"`
	ListenOverflows float64 `json:"listen_overflows"`
	ListenDrops     float64 `json:"listen_drops"`
	// ContextSwitchesPerS is the mean rate over the samples.
	ContextSwitchesPerS float64 `json:"context_switches_per_s"`
	// Samples is how many samples had the counters.
	Samples int `json:"samples"`
}

// kernelCols are the sample columns summed into the totals.
var kernelCols = []struct {
	key string
	get func(*KernelCounters) *float64
}{
	{"swap_ins", func(k *KernelCounters) *float64 { return &k.SwapIns }},
	{"syncookies_sent", func(k *KernelCounters) *float64 { return &k.SyncookiesSent }},
	{"listen_overflows", func(k *KernelCounters) *float64 { return &k.ListenOverflows }},
	{"listen_drops", func(k *KernelCounters) *float64 { return &k.ListenDrops }},
}

// KernelOf totals the kernel columns of the measured samples (t_s > 0), or
// returns nil when the series has none.
func KernelOf(s *Series) *KernelCounters {
	if s == nil {
		return nil
	}
	k := &KernelCounters{}
	var cs, secs float64
	for _, smp := range s.Samples {
		if smp.AtS <= 0 {
			continue
		}
		v, ok := smp.Values["ctx_switches"]
		if !ok {
			continue
		}
		k.Samples++
		cs += v * smp.ElapsedS
		secs += smp.ElapsedS
		for _, c := range kernelCols {
			*c.get(k) += smp.Values[c.key] * smp.ElapsedS
		}
	}
	if k.Samples == 0 {
		return nil
	}
	for _, c := range kernelCols {
		*c.get(k) = stats.Round(*c.get(k), 0)
	}
	if secs > 0 {
		k.ContextSwitchesPerS = stats.Round(cs/secs, 0)
	}
	return k
}

// Line is the summary's short line: the context switch rate, then each
// counter that is not zero, or that none was.
func (k *KernelCounters) Line() string {
	var odd []string
	for _, c := range []struct {
		v    float64
		what string
	}{
		{k.SwapIns, "pages swapped in"},
		{k.SyncookiesSent, "SYN cookies sent"},
		{k.ListenOverflows, "listen-queue overflows"},
		{k.ListenDrops, "listen drops"},
	} {
		if c.v != 0 {
			odd = append(odd, fmt.Sprintf("%.0f %s", c.v, c.what))
		}
	}
	rest := "no swap-ins, SYN cookies or listen-queue overflows"
	if len(odd) > 0 {
		rest = strings.Join(odd, ", ")
	}
	return fmt.Sprintf("%.0f context switches/s; %s (%d samples)", k.ContextSwitchesPerS, rest, k.Samples)
}
