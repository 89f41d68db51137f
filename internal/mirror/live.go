package mirror

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/shakedown/shakedown/internal/usage"
)

// The live page (/), the Prometheus metrics (/metrics) and the end of a
// snapshot period on request (POST /rotate) of --http.
// Both read the mirror's figures when asked (Summary), so that serving
// them costs the clients' path nothing between requests. Neither shows a
// password: targets appear as their redacted URLs, accounts not at all.

// liveServer serves the page and /metrics until close.
type liveServer struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{}
}

// serveHTTP listens on addr and serves the page and /metrics in a
// goroutine of its own, which close stops.
func (m *Mirror) serveHTTP(ctx context.Context, addr string) (*liveServer, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for the live page on %s: %w", addr, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(&collector{m: m})
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/rotate", m.serveRotate)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		var b bytes.Buffer
		if err := m.WriteHTML(&b); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(b.Bytes())
	})
	s := &liveServer{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		_ = s.srv.Serve(ln) // returns when close shuts it down
	}()
	return s, nil
}

// Rotated is the answer to POST /rotate: the snapshot period that ended.
type Rotated struct {
	Period     int       `json:"period"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	Statements int64     `json:"statements"`
	Differing  int64     `json:"differing"`
}

// serveRotate ends the snapshot period under way on POST /rotate, as
// SIGHUP does, and answers with it in JSON. A request that a browser
// sends from another site's page (its Origin names another host) is
// refused, so that no page can cut a canary's periods.
func (m *Mirror) serveRotate(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST /rotate ends the snapshot period under way", http.StatusMethodNotAllowed)
		return
	}
	if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
		http.Error(w, "a rotate from another site's page is refused", http.StatusForbidden)
		return
	}
	p, err := m.RotateNow(r.Context(), 10*time.Second)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(Rotated{Period: p.N, Start: p.Start, End: p.End, Statements: p.Figures.Through, Differing: p.Figures.Differing})
}

// RequestRotate asks the mirror whose live page is on addr (its --http)
// to end the snapshot period under way, as SIGHUP would, and returns the
// period that ended. It waits at most 15 s.
func RequestRotate(ctx context.Context, addr string) (Rotated, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	var r Rotated
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+"/rotate", nil)
	if err != nil {
		return r, usage.Errorf("mirror --rotate: --http %s: %v", addr, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return r, fmt.Errorf("mirror --rotate: no mirror answers on %s (its --http address): %w", addr, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return r, fmt.Errorf("mirror --rotate: read the answer of %s: %w", addr, err)
	}
	if resp.StatusCode != http.StatusOK {
		return r, fmt.Errorf("mirror --rotate: %s answered %s: %s", addr, resp.Status, bytes.TrimSpace(body))
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return r, fmt.Errorf("mirror --rotate: %s answered what is not a mirror's: %w", addr, err)
	}
	return r, nil
}

// HTTPAddr is the address of the live page ("" without --http).
func (m *Mirror) HTTPAddr() string {
	if m.http == nil {
		return ""
	}
	return m.http.ln.Addr().String()
}

// close stops serving, letting a request in progress finish for up to a
// second.
func (s *liveServer) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); errors.Is(err, context.DeadlineExceeded) {
		s.srv.Close()
	}
	<-s.done
}

// collector is the mirror's figures as Prometheus metrics, read from a
// Summary at each scrape.
type collector struct{ m *Mirror }

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("shakedown_mirror_"+name, help, labels, nil)
}

var (
	mStatements = desc("statements_total", "statements through the mirror, to the control")
	mSessions   = desc("sessions_total", "client sessions served")
	mRefused    = desc("refused_without_tls_total", "clients refused for want of TLS (error 3159)")
	mUp         = desc("candidate_up", "1 while the candidate is up, 0 while it is down", "candidate")
	mLost       = desc("candidate_lost_total", "times the candidate went down", "candidate")
	mRatio      = desc("candidate_latency_ratio", "the candidate's latency over the control's, summed over the compared statements", "candidate")
	mCtlSec     = desc("control_latency_seconds_total", "the control's latency summed over the statements compared on the candidate", "candidate")
	mCandSec    = desc("candidate_latency_seconds_total", "the candidate's latency summed over its compared statements", "candidate")
	mCand       = map[string]*prometheus.Desc{
		"mirrored":  desc("mirrored_total", "reads queued for the candidate", "candidate"),
		"compared":  desc("compared_total", "reads compared on the candidate", "candidate"),
		"differing": desc("differing_total", "reads whose result differed on the candidate", "candidate"),
		"dropped":   desc("dropped_total", "reads dropped for the candidate (its queue full, or it down)", "candidate"),
	}
	cLabels    = []string{"candidate", "digest"}
	mClassThru = desc("class_statements_total", "statements of the query class through the mirror", "digest")
	mClass     = map[string]*prometheus.Desc{
		"mirrored":  desc("class_mirrored_total", "reads of the class queued for the candidate", cLabels...),
		"compared":  desc("class_compared_total", "reads of the class compared on the candidate", cLabels...),
		"differing": desc("class_differing_total", "reads of the class whose result differed", cLabels...),
		"dropped":   desc("class_dropped_total", "reads of the class dropped for the candidate", cLabels...),
	}
	mClassCtl   = desc("class_control_p50_seconds", "the control's median latency for the class (over its latency samples)", cLabels...)
	mClassCand  = desc("class_candidate_p50_seconds", "the candidate's median latency for the class", cLabels...)
	mClassRatio = desc("class_latency_ratio", "the candidate's latency over the control's for the class (the sweep statistics' estimate)", cLabels...)
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{mStatements, mSessions, mRefused, mUp, mLost, mRatio, mCtlSec, mCandSec, mClassThru, mClassCtl, mClassCand, mClassRatio} {
		ch <- d
	}
	for _, m := range []map[string]*prometheus.Desc{mCand, mClass} {
		for _, d := range m {
			ch <- d
		}
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.m.Summary()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter(mStatements, float64(s.Through))
	counter(mSessions, float64(s.Sessions))
	counter(mRefused, float64(s.RefusedPlain))
	for _, cd := range s.Candidates {
		up := 1.0
		if cd.Down {
			up = 0
		}
		gauge(mUp, up, cd.Name)
		counter(mLost, float64(cd.Lost), cd.Name)
		gauge(mRatio, cd.Ratio, cd.Name)
		counter(mCtlSec, cd.ControlSeconds, cd.Name)
		counter(mCandSec, cd.CandidateSeconds, cd.Name)
		counter(mCand["mirrored"], float64(cd.Mirrored), cd.Name)
		counter(mCand["compared"], float64(cd.Compared), cd.Name)
		counter(mCand["differing"], float64(cd.Differing), cd.Name)
		counter(mCand["dropped"], float64(cd.Dropped), cd.Name)
	}
	for _, cl := range s.Classes {
		counter(mClassThru, float64(cl.Through), cl.Digest)
		for _, cc := range cl.Candidates {
			counter(mClass["mirrored"], float64(cc.Mirrored), cc.Name, cl.Digest)
			counter(mClass["compared"], float64(cc.Compared), cc.Name, cl.Digest)
			counter(mClass["differing"], float64(cc.Differing), cc.Name, cl.Digest)
			counter(mClass["dropped"], float64(cc.Dropped+cc.Down), cc.Name, cl.Digest)
			if cc.Compared > 0 {
				gauge(mClassCtl, cc.ControlP50ms/1e3, cc.Name, cl.Digest)
				gauge(mClassCand, cc.CandidateP50ms/1e3, cc.Name, cl.Digest)
				gauge(mClassRatio, cc.Ratio, cc.Name, cl.Digest)
			}
		}
	}
}
