// Package layers holds no code, only the tests that keep the shape of the
// internal packages: each package imports only packages below it, so that
// the stored documents do not link their producers and a renderer does not
// link package bench, which runs the load (the order is written in
// layers_test.go); and each concept has one owner, found by scanning the
// source (owners_test.go, render_test.go, names_test.go, outfile_test.go):
// only package target opens a server connection or writes a MySQL error
// number, only render writes a page's shell or stylesheet, only progress
// redraws a status line, only result.StatusOf says a run is ok, verdicts
// are compared as stats.State and never as strings, files are written
// through outfile, and no package gives another's name a second one.
// cli_test.go keeps the command layer to flags, calls and printing, and
// every function short enough to read whole.
package layers
