// Package golden compares test output with files under testdata/, and
// rewrites those files when the tests run with -update.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Check compares got with testdata/name: JSON files (name ending in .json)
// by meaning, everything else byte for byte. With -update it writes got
// there instead.
func Check(t testing.TB, name string, got []byte) {
	t.Helper()
	want, ok := read(t, name, got)
	if !ok {
		return
	}
	if strings.HasSuffix(name, ".json") {
		var g, w any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: output is not JSON: %v", name, err)
		}
		if err := json.Unmarshal(want, &w); err != nil {
			t.Fatalf("%s: golden file is not JSON: %v", name, err)
		}
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: got\n%s\nwant\n%s", name, got, want)
		}
		return
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it): got\n%s\nwant\n%s", name, got, want)
	}
}

// read returns the golden file, or writes got to it with -update and
// reports false.
func read(t testing.TB, name string, got []byte) ([]byte, bool) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return nil, false
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	return want, true
}
