package capture

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/shakedown/shakedown/internal/fingerprint"
)

// WorkloadBuilder samples each fingerprint's values from a capture and
// writes a weighted statement file for the "sql" workload: each
// fingerprint one statement, weighed by its count, its literals turned
// into {{file ...}} placeholders whose values come from the capture.
type WorkloadBuilder struct {
	// ReadsOnly keeps read-only statements alone.
	ReadsOnly bool
	byFP      map[string]*wlFP
	rng       *rand.Rand
}

// wlFP is one fingerprint's template and sampled values.
type wlFP struct {
	digest   string
	count    int64
	template string
	lits     []fingerprint.Literal // the template's literal positions
	samples  [][]string            // reservoir of value tuples
	seen     int64                 // tuples offered to the reservoir
	verb     string
}

// samplesPerFP bounds the values kept per fingerprint.
const samplesPerFP = 500

// workloadVerbs are the statements that make sense as independent events
// of a load: session state (SET, USE) and transaction control do not.
var workloadVerbs = map[string]bool{"SELECT": true, "INSERT": true, "UPDATE": true, "DELETE": true, "REPLACE": true}

// NewWorkloadBuilder returns an empty builder.
func NewWorkloadBuilder(readsOnly bool) *WorkloadBuilder {
	return &WorkloadBuilder{ReadsOnly: readsOnly, byFP: map[string]*wlFP{}, rng: rand.New(rand.NewPCG(1, 2))}
}

// Add offers one statement.
func (b *WorkloadBuilder) Add(r *Record, info *fingerprint.Info) {
	if r.Error != 0 || !workloadVerbs[info.Verb] || (b.ReadsOnly && !info.ReadOnly) || info.Write == "several statements in one" {
		return
	}
	lx := fingerprint.Lex(r.SQL)
	vals, ok := tupleOf(r, lx.Literals)
	f := b.byFP[r.Digest]
	if f == nil {
		if len(b.byFP) >= maxFingerprints || !ok {
			return
		}
		f = &wlFP{digest: r.Digest, template: r.SQL, lits: lx.Literals, verb: info.Verb}
		b.byFP[r.Digest] = f
	}
	f.count++
	if !ok || len(vals) != len(f.lits) {
		return
	}
	f.seen++
	if len(f.samples) < samplesPerFP {
		f.samples = append(f.samples, vals)
	} else if j := b.rng.Int64N(f.seen); j < samplesPerFP {
		f.samples[j] = vals
	}
}

// tupleOf returns a statement's values: its literals, or a prepared
// statement's parameters. ok is false when one cannot go in a values file
// (NULL, bytes, a line break).
func tupleOf(r *Record, lits []fingerprint.Literal) ([]string, bool) {
	vals := make([]string, 0, len(lits))
	pi := 0
	for _, l := range lits {
		var v string
		if l.Param {
			if pi >= len(r.Params) {
				return nil, false
			}
			p := r.Params[pi]
			pi++
			switch x := p.(type) {
			case string:
				v = x
			case nil, map[string]any, map[string]string:
				return nil, false
			default:
				v = fmt.Sprint(x)
			}
		} else {
			v = l.Value()
		}
		if strings.ContainsAny(v, "\n\r") {
			return nil, false
		}
		vals = append(vals, v)
	}
	return vals, true
}

// ErrNoWorkload is a capture that holds no statement to make load of.
var ErrNoWorkload = errors.New("the capture holds no SELECT, INSERT, UPDATE, DELETE or REPLACE statement that ran without error")

// Write writes the statement file to path and the values beside it, in
// the directory path+".values". It returns the number of statements.
// A capture with nothing to replay as load is ErrNoWorkload.
func (b *WorkloadBuilder) Write(path string, source string) (int, error) {
	fps := make([]*wlFP, 0, len(b.byFP))
	for _, f := range b.byFP {
		fps = append(fps, f)
	}
	sort.Slice(fps, func(i, j int) bool {
		if fps[i].count != fps[j].count {
			return fps[i].count > fps[j].count
		}
		return fps[i].digest < fps[j].digest
	})
	if len(fps) == 0 {
		return 0, fmt.Errorf("--to-workload: %w", ErrNoWorkload)
	}
	dir := path + ".values"
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("--to-workload: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return 0, fmt.Errorf("--to-workload: %w", err)
	}
	defer f.Close()
	fmt.Fprintf(f, "-- A workload made by shakedown capture --to-workload from %s.\n", source)
	fmt.Fprintf(f, "-- Each statement stands for one fingerprint, weighed by how often it ran;\n")
	fmt.Fprintf(f, "-- its values are drawn from up to %d sampled in the capture (%s).\n", samplesPerFP, filepath.Base(dir))
	fmt.Fprintf(f, "-- Run it: shakedown run sql --file %s --target URL --threads N --time S\n", filepath.Base(path))
	for _, fp := range fps {
		stmt, err := fp.render(dir, filepath.Base(dir))
		if err != nil {
			return 0, err
		}
		fmt.Fprintf(f, "\n-- @weight %d\n-- @name %s_%s\n%s;\n", fp.count, strings.ToLower(fp.verb), fp.digest[:8], stmt)
	}
	if err := f.Close(); err != nil {
		return 0, fmt.Errorf("--to-workload: %w", err)
	}
	return len(fps), nil
}

// render writes fp's value files and returns its statement with
// placeholders. A literal with one value in every sample stays as it is,
// as does a number after BY (ORDER BY 1 names a column).
func (fp *wlFP) render(dir, rel string) (string, error) {
	var b strings.Builder
	last := 0
	for i, l := range fp.lits {
		b.WriteString(fp.template[last:l.Pos])
		last = l.End
		values := distinct(fp.samples, i)
		if !l.Param && (len(values) <= 1 || afterBy(fp.template[:l.Pos])) {
			b.WriteString(l.Text)
			continue
		}
		if len(values) == 0 {
			return "", fmt.Errorf("--to-workload: no usable value for parameter %d of %s", i+1, fp.digest)
		}
		name := fmt.Sprintf("%s_%d.txt", fp.digest[:8], i+1)
		if err := writeLines(filepath.Join(dir, name), fp.samples, i); err != nil {
			return "", err
		}
		fmt.Fprintf(&b, "{{file %s/%s}}", rel, name)
	}
	b.WriteString(fp.template[last:])
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(b.String()), ";")), nil
}

func distinct(samples [][]string, i int) map[string]bool {
	m := map[string]bool{}
	for _, s := range samples {
		m[s[i]] = true
		if len(m) > 1 {
			break
		}
	}
	return m
}

func afterBy(before string) bool {
	f := strings.Fields(strings.ToLower(before))
	return len(f) > 0 && (f[len(f)-1] == "by" || f[len(f)-1] == ",") && strings.Contains(strings.ToLower(before), " by ")
}

func writeLines(path string, samples [][]string, i int) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("--to-workload: %w", err)
	}
	w := io.Writer(f)
	for _, s := range samples {
		if _, err := fmt.Fprintln(w, s[i]); err != nil {
			f.Close()
			return fmt.Errorf("--to-workload: %w", err)
		}
	}
	return f.Close()
}
