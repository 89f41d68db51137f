package monitor

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TiDB's /metrics, as a TiDB v8.4 sandbox served it after a read/write
// run, mapped to the status names the columns read.
func TestMetricsPortSource(t *testing.T) {
	body, err := os.ReadFile("testdata/tidb-metrics.txt")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		w.Write(body)
	}))
	defer srv.Close()
	src := MetricsPortSource{Addr: strings.TrimPrefix(srv.URL, "http://")}
	r := &Reading{Values: map[string]float64{}}
	if err := src.Read(context.Background(), nil, r); err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]float64{
		"Questions":  16 + 0 + 188 + 175388,
		"Com_commit": 3736,
		"Com_select": 153056,
	} {
		if got, ok := r.Values[k]; !ok || got != want {
			t.Errorf("%s: got %v (present %v), want %v", k, got, ok, want)
		}
	}
	if _, ok := r.Values["Threads_connected"]; !ok {
		t.Error("Threads_connected: absent, want tidb_server_connections")
	}
	if _, ok := r.Values["Innodb_rows_read"]; ok {
		t.Error("Innodb_rows_read: present, want a figure the port does not give left absent")
	}

	srv.Close()
	if err := src.Read(context.Background(), nil, &Reading{Values: map[string]float64{}}); err == nil || !strings.Contains(err.Error(), "read status port") {
		t.Errorf("a port that does not answer: got %v, want an error naming the status port", err)
	}
}
