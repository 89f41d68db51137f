// Package render is the one place shakedown's HTML pages are framed: the
// page shell (doctype, head, the stylesheet, the body and its main), the
// one stylesheet every page shares, the escaping rule for text written by
// hand, and the scripts the report's browser checks read. Each tool keeps
// only its page's content and hands it to Write or Execute, so that a page
// cannot grow its own shell or styles, and what every page promises (one
// self-contained file that refers to nothing outside itself) is kept here.
package render

import (
	"bufio"
	"bytes"
	"fmt"
	"html"
	"html/template"
	"io"
	"strings"
)

// Esc escapes text for HTML. It also writes "://" as "&#58;//", so that no
// URL-looking text from a server or a target lands in the file as a link:
// a page opens offline and holds no http:// or https:// at all.
func Esc(s string) string {
	return strings.ReplaceAll(html.EscapeString(s), "://", "&#58;//")
}

// Attr is one attribute of the page's <html> element, for browser tests
// and scripts to read (data-verdict="ready").
type Attr struct {
	Name, Value string
}

// Page is what a tool says about its page's frame.
type Page struct {
	// Title is the page's <title>, as plain text.
	Title string
	// Class is the class of <body>: it picks the part of the stylesheet
	// that is the page's own (report, history, bisect, verify, check,
	// replay, readiness).
	Class string
	// Attrs are set on <html>.
	Attrs []Attr
	// Scripts adds the error and chart check scripts that the report's
	// browser tests read (data-js-error, data-charts-drawn on <html>).
	// Pages without charts go without any script.
	Scripts bool
}

// Write writes the page: the shell, and body's content inside its <main>.
// A write error surfaces once, from the end.
func Write(w io.Writer, p Page, body func(w io.Writer) error) error {
	bw := bufio.NewWriter(w)
	fmt.Fprint(bw, "<!DOCTYPE html>\n<html lang=\"en\"")
	for _, a := range p.Attrs {
		fmt.Fprintf(bw, " %s=\"%s\"", a.Name, html.EscapeString(a.Value))
	}
	fmt.Fprint(bw, ">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	fmt.Fprintf(bw, "<title>%s</title>\n", Esc(p.Title))
	if p.Scripts {
		fmt.Fprintf(bw, "<script>%s</script>\n", errorScript)
	}
	fmt.Fprintf(bw, "<style>%s</style>\n</head>\n<body class=\"%s\">\n<main>\n", Stylesheet, html.EscapeString(p.Class))
	if err := body(bw); err != nil {
		return err
	}
	fmt.Fprint(bw, "</main>\n")
	if p.Scripts {
		fmt.Fprintf(bw, "<script>%s</script>\n", checkScript)
	}
	fmt.Fprint(bw, "</body>\n</html>\n")
	return bw.Flush()
}

// Template parses a page's content template: what lies inside <main>,
// never a shell of its own.
func Template(name string, funcs template.FuncMap, text string) *template.Template {
	return template.Must(template.New(name).Funcs(funcs).Parse(text))
}

// Execute writes the page with t's output, for data, as its content. The
// output gets Esc's rule too: html/template escapes markup, and "://"
// becomes "&#58;//", so that a template page holds no link either.
func Execute(w io.Writer, p Page, t *template.Template, data any) error {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return err
	}
	content := bytes.ReplaceAll(b.Bytes(), []byte("://"), []byte("&#58;//"))
	return Write(w, p, func(w io.Writer) error {
		_, err := w.Write(content)
		return err
	})
}

// checkScript marks the page once it has laid out: data-charts counts the
// charts, data-charts-drawn those that were laid out with a line or a
// "no data" mark. The browser test reads both from the DOM.
const checkScript = `(function () {
  var charts = document.querySelectorAll('svg.chart'), drawn = 0;
  for (var i = 0; i < charts.length; i++) {
    var c = charts[i], box = c.getBoundingClientRect();
    if (box.width > 0 && box.height > 0 && c.querySelector('.series, .nodata')) { drawn++; }
  }
  document.documentElement.setAttribute('data-charts', String(charts.length));
  document.documentElement.setAttribute('data-charts-drawn', String(drawn));
})();`

// errorScript records a script error on <html>, for the browser test.
const errorScript = `window.addEventListener('error', function (e) {
  document.documentElement.setAttribute('data-js-error', String(e.message));
});`
