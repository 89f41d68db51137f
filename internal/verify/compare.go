package verify

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"unicode/utf8"
)

// valuesEqual applies a column's comparison rule to two canonical forms
// (nil is NULL). NULL equals only NULL.
func valuesEqual(s *colSpec, a, b []byte) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch s.rule {
	case ruleFloat:
		fa, err1 := strconv.ParseFloat(string(a), 64)
		fb, err2 := strconv.ParseFloat(string(b), 64)
		if err1 == nil && err2 == nil {
			return floatsEqual(fa, fb, s.tol)
		}
	case ruleJSON:
		if eq, ok := jsonEqual(a, b); ok {
			return eq
		}
	}
	return bytes.Equal(a, b)
}

// floatsEqual: |a-b| <= tol * max(|a|, |b|).
func floatsEqual(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

// jsonEqual compares two JSON documents by meaning: object member order
// and whitespace do not count, numbers compare by exact value (1 = 1.0 =
// 1e0). ok is false when either is not JSON.
func jsonEqual(a, b []byte) (eq, ok bool) {
	va, err1 := decodeJSON(a)
	vb, err2 := decodeJSON(b)
	if err1 != nil || err2 != nil {
		return false, false
	}
	return jsonValuesEqual(va, vb), true
}

func decodeJSON(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func jsonValuesEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonValuesEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonValuesEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return false
		}
		ra, ok1 := new(big.Rat).SetString(string(x))
		rb, ok2 := new(big.Rat).SetString(string(y))
		if ok1 && ok2 {
			return ra.Cmp(rb) == 0
		}
		return x == y
	}
	return a == b
}

// displayValue renders a value for reports: text as itself, binary (or
// text that is not UTF-8) as 0x-hex, NULL as nil.
func displayValue(v []byte, binary bool) *string {
	if v == nil {
		return nil
	}
	s := string(v)
	if binary || !utf8.Valid(v) {
		s = "0x" + hex.EncodeToString(v)
	}
	return &s
}
