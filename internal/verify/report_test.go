package verify

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/golden"

	"github.com/shakedown/shakedown/internal/schema"
	"github.com/shakedown/shakedown/internal/target"
)

func strp(s string) *string { return &s }

// sampleReport has one table of each outcome.
func sampleReport() *Report {
	return &Report{
		Version:           ReportVersion,
		Source:            "mysql://app@db1:3306/shop",
		Target:            "mysql://app@db2:3306/shop",
		SourceServer:      target.Server{Version: "8.0.36", Flavour: "mysql"},
		TargetServer:      target.Server{Version: "10.11.19-MariaDB", Flavour: "mariadb"},
		Started:           time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Seconds:           12.3,
		DifferingRows:     4,
		SchemaDifferences: 3,
		Rules:             rules(checksumPrefix),
		Tables: []*TableReport{
			{
				Table: "shop.orders", RowsSource: 1000000, RowsTarget: 999999, Chunks: 8, DifferingRows: 3,
				SchemaDifferences: []schema.Diff{{Kind: "column_type", Object: "total", Source: "decimal(10,2)", Target: "double"}},
				Key:               []string{"id"}, KeyIndex: "PRIMARY", Compared: []string{"id", "total", "note"}, Seconds: 9.5,
				Rows: []*RowDiff{
					{Key: []KeyPart{{"id", strp("7")}}, Kind: KindChanged, Columns: []string{"total", "note"}, Count: 1},
					{Key: []KeyPart{{"id", strp("12")}}, Kind: KindMissing, Count: 1},
					{Key: []KeyPart{{"id", strp("1000001")}}, Kind: KindExtra, Count: 1},
				},
			},
			{
				Table: "shop.log", RowsSource: 10, RowsTarget: 10, Chunks: 1, DifferingRows: 1,
				SchemaDifferences: []schema.Diff{}, Key: []string{}, Compared: []string{"at", "msg"}, Seconds: 0.1,
				Notes: []string{"no primary key or NOT NULL unique key: compared as whole rows, duplicates counted, in one chunk"},
				Rows:  []*RowDiff{{Key: []KeyPart{{"at", strp("2026-01-01 00:00:00")}, {"msg", nil}}, Kind: KindExtra, Count: 2}},
			},
			{
				Table: "shop.users", RowsSource: 50, RowsTarget: 50, Chunks: 1, Equal: true,
				SchemaDifferences: []schema.Diff{}, Key: []string{"id"}, KeyIndex: "PRIMARY", Compared: []string{"id", "name"},
				Rows: []*RowDiff{}, Seconds: 0.2,
			},
			{
				Table: "shop.old", RowsSource: 5, Chunks: 0,
				SchemaDifferences: []schema.Diff{{Kind: "table_missing_on_target"}},
				Key:               []string{}, Compared: []string{}, Rows: []*RowDiff{},
			},
			{
				Table: "shop.<script>", RowsSource: 1, RowsTarget: 1, Chunks: 1,
				SchemaDifferences: []schema.Diff{{Kind: "index_missing_on_target", Object: "k INDEX (a)"}},
				Key:               []string{"id"}, Compared: []string{"id"}, Rows: []*RowDiff{},
			},
		},
	}
}

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := WriteText(&b, sampleReport(), 2); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.txt", b.Bytes())
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "report.json", b.Bytes())
	// The fields the issue asks for, with their types.
	var doc struct {
		Tables []map[string]any `json:"tables"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, field := range []string{"table", "rows_source", "rows_target", "chunks", "equal", "differing_rows", "schema_differences", "rows"} {
		if _, ok := doc.Tables[0][field]; !ok {
			t.Errorf("table JSON has no %q", field)
		}
	}
	if n, ok := doc.Tables[0]["differing_rows"].(float64); !ok || n != 3 {
		t.Errorf("differing_rows: got %v, want the integer 3", doc.Tables[0]["differing_rows"])
	}
	row := doc.Tables[0]["rows"].([]any)[0].(map[string]any)
	if row["kind"] != "changed" || row["key"].(map[string]any)["id"] != "7" {
		t.Errorf("first row: got %v", row)
	}
}

func TestWriteHTML(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, sampleReport(), 2); err != nil {
		t.Fatal(err)
	}
	html := b.String()
	for _, want := range []string{`<table id="verify-summary">`, "shop.orders", "missing on target", "id=12", "shop.&lt;script&gt;", "1 more rows not listed"} {
		if !strings.Contains(html, want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
	if strings.Contains(html, "<script>") || strings.Contains(html, "http") && strings.Contains(html, "src=") {
		t.Error("HTML has a script or an external resource")
	}
	golden.Check(t, "report.html", b.Bytes())
}
