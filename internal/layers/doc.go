// Package layers holds no code, only the tests that keep the shape of the
// internal packages: each package imports only packages below it, so that
// the stored documents do not link their producers and a renderer does not
// link the load engine (the order is written in layers_test.go); and only
// package target opens a server connection or writes a MySQL error number
// (owners_test.go), so that how a connect is bounded and what an error
// number means are decided once; and only package render writes a page's
// shell or stylesheet (render_test.go), so that every HTML page has the one
// frame, look and escaping rule.
package layers
