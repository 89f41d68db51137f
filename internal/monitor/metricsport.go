package monitor

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// MetricsPortSource reads the server's figures from its HTTP status port
// (Prometheus text at /metrics) where SHOW GLOBAL STATUS lacks them, as on
// TiDB, under the status names the columns read: Questions (statements
// received: COM_QUERY and COM_STMT_EXECUTE, as MySQL counts them),
// Com_select, Com_insert, Com_update, Com_delete, Com_commit and
// Com_rollback (statements executed, by kind), Threads_connected and
// Threads_running (sessions holding one of the server's execution
// tokens). A figure the port does not give stays absent, never zero.
type MetricsPortSource struct {
	// Addr is host:port of the status port.
	Addr string
	// Client is the HTTP client; nil means one with a 2 s timeout.
	Client *http.Client
}

// Name is "metrics port".
func (MetricsPortSource) Name() string { return "metrics port" }

// metricsTimeout bounds one read of the status port.
const metricsTimeout = 2 * time.Second

// Read fetches /metrics and maps it.
func (m MetricsPortSource) Read(ctx context.Context, _ *OwnQuerier, r *Reading) error {
	c := m.Client
	if c == nil {
		c = &http.Client{Timeout: metricsTimeout}
	}
	ctx, cancel := context.WithTimeout(ctx, metricsTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.Addr+"/metrics", nil)
	if err != nil {
		return fmt.Errorf("read status port: %w", err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("read status port %s: %w", m.Addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("read status port %s: %s", m.Addr, resp.Status)
	}
	return mapMetrics(io.LimitReader(resp.Body, 64<<20), r.Values)
}

// mapMetrics parses Prometheus text and sets the status names it maps.
func mapMetrics(body io.Reader, values map[string]float64) error {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(body)
	if err != nil {
		return fmt.Errorf("read status port: %w", err)
	}
	sum := func(name string, keep func(labels map[string]string) bool, set func(labels map[string]string, v float64)) {
		f := families[name]
		if f == nil {
			return
		}
		for _, mt := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range mt.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if keep != nil && !keep(labels) {
				continue
			}
			set(labels, value(mt))
		}
	}
	add := func(key string) func(map[string]string, float64) {
		return func(_ map[string]string, v float64) { values[key] += v }
	}
	sum("tidb_server_query_total", func(l map[string]string) bool {
		return l["type"] == "Query" || l["type"] == "StmtExecute"
	}, add("Questions"))
	kinds := map[string]string{"Select": "Com_select", "Insert": "Com_insert", "Replace": "Com_replace", "Update": "Com_update",
		"Delete": "Com_delete", "Commit": "Com_commit", "Rollback": "Com_rollback", "Begin": "Com_begin"}
	for _, k := range kinds {
		if families["tidb_executor_statement_total"] != nil {
			values[k] = 0
		}
	}
	sum("tidb_executor_statement_total", nil, func(l map[string]string, v float64) {
		if k, ok := kinds[l["type"]]; ok {
			values[k] += v
		}
	})
	sum("tidb_server_connections", nil, add("Threads_connected"))
	sum("tidb_server_tokens", nil, add("Threads_running"))
	return nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue()
	}
	return 0
}
