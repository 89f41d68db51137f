package render

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/stats"
)

func TestEsc(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"plain", "oltp_read_only", "oltp_read_only"},
		{"markup", `<script>"x"&</script>`, "&lt;script&gt;&#34;x&#34;&amp;&lt;/script&gt;"},
		{"url is no link", "mysql://u@h:3306/db", "mysql&#58;//u@h:3306/db"},
		{"http is no link", "see https://example.org", "see https&#58;//example.org"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Esc(c.in); got != c.want {
				t.Errorf("Esc(%q): got %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	cases := []struct {
		name    string
		page    Page
		want    []string
		notWant []string
	}{
		{"plain page", Page{Title: "shakedown <verify>", Class: "verify"},
			[]string{"<!DOCTYPE html>\n<html lang=\"en\">\n", "<title>shakedown &lt;verify&gt;</title>", `<body class="verify">` + "\n<main>\n<p>content</p>\n</main>\n</body>\n</html>\n", "<style>" + Stylesheet + "</style>"},
			[]string{"<script"}},
		{"scripts and attributes", Page{Title: "t", Class: "report", Scripts: true, Attrs: []Attr{{"data-verdict", `not "ready"`}}},
			[]string{`<html lang="en" data-verdict="not &#34;ready&#34;">`, "<script>" + errorScript + "</script>\n<style>", "</main>\n<script>" + checkScript + "</script>\n</body>"},
			nil},
		{"title holds no link", Page{Title: "shakedown: mysql://u@h/db"},
			[]string{"<title>shakedown: mysql&#58;//u@h/db</title>"}, []string{"mysql://"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			err := Write(&b, c.page, func(w io.Writer) error {
				_, err := io.WriteString(w, "<p>content</p>\n")
				return err
			})
			if err != nil {
				t.Fatalf("Write: got %v, want nil", err)
			}
			got := b.String()
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("got page\n%s\nwant %q in it", got, w)
				}
			}
			for _, w := range c.notWant {
				if strings.Contains(got, w) {
					t.Errorf("got page\n%s\nwant no %q in it", got, w)
				}
			}
			if n := strings.Count(got, "<style"); n != 1 {
				t.Errorf("got %d <style> blocks, want 1", n)
			}
		})
	}
}

// TestWriteErrors: the content's error and the writer's come back.
func TestWriteErrors(t *testing.T) {
	if err := Write(io.Discard, Page{}, func(io.Writer) error { return errBoom }); !errors.Is(err, errBoom) {
		t.Errorf("content error: got %v, want %v", err, errBoom)
	}
	if err := Write(failWriter{}, Page{}, func(io.Writer) error { return nil }); !errors.Is(err, errBoom) {
		t.Errorf("write error: got %v, want %v", err, errBoom)
	}
}

var errBoom = errors.New("errBoom")

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errBoom }

func TestExecute(t *testing.T) {
	tmpl := Template("t", map[string]any{"up": strings.ToUpper}, `<h1>{{up .}}</h1>`)
	var b bytes.Buffer
	if err := Execute(&b, Page{Class: "check"}, tmpl, "<a> mysql://u@h/db"); err != nil {
		t.Fatalf("Execute: got %v, want nil", err)
	}
	if want := "<main>\n<h1>&lt;A&gt; MYSQL&#58;//U@H/DB</h1></main>"; !strings.Contains(b.String(), want) {
		t.Errorf("got\n%s\nwant %q in it", b.String(), want)
	}
}

func TestStateClass(t *testing.T) {
	cases := []struct {
		name   string
		state  stats.State
		strong bool
		want   string
	}{
		{"faster", stats.Faster, false, "faster"},
		{"faster, strong", stats.Faster, true, "faster strong"},
		{"slower, strong", stats.Slower, true, "slower strong"},
		{"same ignores strong", stats.Same, true, "same"},
		{"inconclusive", stats.Inconclusive, false, "inconclusive"},
		{"no verdict", stats.NoVerdict, false, "nodata"},
		{"empty", "", false, "nodata"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := StateClass(c.state, c.strong); got != c.want {
				t.Errorf("StateClass(%q, %v): got %q, want %q", c.state, c.strong, got, c.want)
			}
		})
	}
}
