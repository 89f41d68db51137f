// Package layers holds no code, only the test that keeps the import order of
// the internal packages: each package imports only packages below it, so that
// the stored documents do not link their producers and a renderer does not
// link the load engine. The order is written in layers_test.go.
package layers
