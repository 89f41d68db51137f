package monitor

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/shakedown/shakedown/internal/usage"
)

// WatchPeak is the highest value of one figure over the samples of a file
// that watch --json wrote: the production peak a capacity is set against.
type WatchPeak struct {
	// File is the file as it was named.
	File string `json:"file"`
	// Key is the figure's column key ("qps", "tps").
	Key   string  `json:"figure"`
	Value float64 `json:"value"`
	// At is the end of the peak's interval, and Line its line in File.
	At   time.Time `json:"at"`
	Line int       `json:"line"`
	// Samples counts the samples that hold the figure.
	Samples int `json:"samples"`
}

// maxWatchLine bounds one line of a watch file: a sample is a few
// kilobytes, a stall capture with its stacks far less than this.
const maxWatchLine = 16 << 20

// watchLine is what a line of watch --json holds: a sample (its time and
// figures) or a stall capture, which carries no figures and is skipped.
type watchLine struct {
	Time   time.Time          `json:"time"`
	Values map[string]float64 `json:"v"`
	Stall  json.RawMessage    `json:"stall"`
}

// ReadWatchPeakFile reads the file at path with ReadWatchPeak; a file that
// cannot be opened is bad input that names it.
func ReadWatchPeakFile(path, key string) (WatchPeak, error) {
	f, err := os.Open(path)
	if err != nil {
		return WatchPeak{}, usage.Errorf("%s: %v: give a file that shakedown watch TARGET --json wrote", path, errors.Unwrap(err))
	}
	defer f.Close()
	return ReadWatchPeak(f, path, key)
}

// ReadWatchPeak returns the highest value of the figure key over the
// samples of r, lines of watch --json read from the file name. Blank lines
// and stall captures are skipped; a line that is not a sample, an empty
// file and a file whose samples never hold the figure are bad input naming
// the file (and the line) and what to do.
func ReadWatchPeak(r io.Reader, name, key string) (WatchPeak, error) {
	p := WatchPeak{File: name, Key: key}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxWatchLine)
	n, samples := 0, 0
	for sc.Scan() {
		n++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var l watchLine
		if err := json.Unmarshal(b, &l); err != nil {
			return p, badWatchLine(name, n, fmt.Sprintf("not a JSON object (%v)", err))
		}
		if l.Stall != nil && l.Values == nil {
			continue
		}
		if why := l.check(); why != "" {
			return p, badWatchLine(name, n, why)
		}
		samples++
		v, ok := l.Values[key]
		if !ok {
			continue
		}
		if v < 0 {
			return p, badWatchLine(name, n, fmt.Sprintf("%s is negative (%g)", key, v))
		}
		if p.Samples++; p.Samples == 1 || v > p.Value {
			p.Value, p.At, p.Line = v, l.Time, n
		}
	}
	if err := sc.Err(); err != nil {
		return p, usage.Errorf("%s: line %d: %v: give a file that shakedown watch TARGET --json wrote", name, n+1, err)
	}
	switch {
	case samples == 0:
		return p, usage.Errorf("%s: holds no sample: record production with shakedown watch TARGET --json > %s", name, name)
	case p.Samples == 0:
		return p, usage.Errorf("%s: none of its %d samples holds %s: record it with shakedown watch on a server that reports it", name, samples, key)
	}
	return p, nil
}

// check says why a decoded line is not a sample; "" when it is one.
func (l *watchLine) check() string {
	switch {
	case l.Values == nil:
		return `not a sample of watch --json (it has no "v" figures)`
	case l.Time.IsZero():
		return `a sample without its "time"`
	}
	return ""
}

func badWatchLine(name string, line int, why string) error {
	return usage.Errorf("%s: line %d: %s: give a file that shakedown watch TARGET --json wrote, one sample a line", name, line, why)
}
