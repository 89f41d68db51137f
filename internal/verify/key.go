package verify

import (
	"bytes"
	"github.com/shakedown/shakedown/internal/escape"
	"github.com/shakedown/shakedown/internal/schema"
	"math/big"
	"strconv"
	"strings"
)

// keyCmp is how Go orders fetched key values; it matches the ORDER BY the
// server was given for that column.
type keyCmp int

const (
	kcInt     keyCmp = iota // integers, ORDER BY the column
	kcDecimal               // exact decimals, ORDER BY the column
	kcFloat                 // floating point, ORDER BY the column
	kcTime                  // TIME values, ORDER BY the column
	kcBytes                 // bytes: ORDER BY a binary form fetched as ord
)

// keyCol is one column of the key rows are matched by.
type keyCol struct {
	spec   *colSpec
	native string // SQL of the value as stored: range bounds, repair SQL
	ord    string // ORDER BY expression
	fetch  string // the comparable form fetched beside native ("" = native)
	cmp    keyCmp
	arg    byte // how a native value goes back as a query argument: 'i' int, 's' string, 'b' bytes
}

// keyInfo is the key rows are matched by, or none (whole rows).
type keyInfo struct {
	Index    string // source index name: PRIMARY or a unique key; "" for none
	cols     []*keyCol
	srcHint  string // FORCE INDEX name on the source ("" none)
	dstHint  string // and on the target
	ordered  bool   // both sides order and compare the key alike: ranges work
	dstNulls bool   // the target allows NULL in a key column
}

// Names lists the key's columns.
func (k *keyInfo) Names() []string {
	out := make([]string, len(k.cols))
	for i, c := range k.cols {
		out[i] = c.spec.Name
	}
	return out
}

// chooseKey picks the source's primary key, else its first unique key on
// non-NULL columns, provided every column of it exists on the target;
// else none.
func chooseKey(src, dst *schema.Table, specs map[string]*colSpec) *keyInfo {
	for _, ix := range src.Indexes {
		if !ix.Unique || ix.Nullable || ix.Type == "FULLTEXT" || ix.Type == "SPATIAL" {
			continue
		}
		usable := true
		for i, name := range ix.Columns {
			if specs[strings.ToLower(name)] == nil || ix.Parts[i] != name {
				usable = false // missing on the target, a prefix, or an expression
				break
			}
		}
		if !usable {
			continue
		}
		k := &keyInfo{Index: ix.Name, srcHint: ix.Name, ordered: true}
		for _, name := range ix.Columns {
			spec := specs[strings.ToLower(name)]
			k.cols = append(k.cols, newKeyCol(spec))
			if !sameOrder(spec.src, spec.dst) {
				k.ordered = false
			}
			if spec.dst.Nullable {
				k.dstNulls = true
			}
		}
		k.dstHint = matchingIndex(dst, ix.Columns)
		return k
	}
	return &keyInfo{}
}

// matchingIndex names the target index over exactly cols, if any.
func matchingIndex(t *schema.Table, cols []string) string {
	for _, ix := range t.Indexes {
		if len(ix.Columns) != len(cols) {
			continue
		}
		same := true
		for i := range cols {
			if !strings.EqualFold(ix.Columns[i], cols[i]) || ix.Parts[i] != ix.Columns[i] {
				same = false
				break
			}
		}
		if same {
			return ix.Name
		}
	}
	return ""
}

// sameOrder says the servers sort and compare values of the two columns
// the same way, so that a key range selects the same rows on both.
func sameOrder(a, b *schema.Column) bool {
	fa, fb := familyOf(a), familyOf(b)
	switch {
	case a.DataType == "enum" || a.DataType == "set" || b.DataType == "enum" || b.DataType == "set":
		return false // ordered by their position in the list, compared as text
	case (fa == famInt || fa == famBit) && (fb == famInt || fb == famBit):
		return true
	case fa != fb:
		return false
	case fa == famText || fa == famOther || fa == famJSON:
		return a.Charset == b.Charset && a.Collation == b.Collation
	}
	return true
}

func newKeyCol(spec *colSpec) *keyCol {
	c := escape.Ident(spec.Name)
	k := &keyCol{spec: spec, native: c, ord: c, cmp: kcBytes, arg: 's'}
	switch spec.fam {
	case famInt, famBit:
		k.native, k.cmp, k.arg = spec.val, kcInt, 'i'
	case famDecimal:
		k.cmp = kcDecimal
	case famFloat:
		k.cmp = kcFloat
	case famDate:
	case famDateTime, famTimestamp:
		k.fetch = "CAST(" + c + " AS DATETIME(6))"
	case famTime:
		k.cmp = kcTime
	case famBinary, famGeo:
		k.native, k.arg = spec.val, 'b'
	default:
		// Text: byte order of the UTF-8 form, whatever the collation.
		k.ord = "CAST(CONVERT(" + c + " USING utf8mb4) AS BINARY)"
		k.fetch = k.ord
	}
	return k
}

// arg turns a fetched native value into a query argument.
func (k *keyCol) argOf(v []byte) any {
	switch k.arg {
	case 'i':
		if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
			return n
		}
		if n, err := strconv.ParseUint(string(v), 10, 64); err == nil {
			return n
		}
		return string(v)
	case 'b':
		return append([]byte{}, v...)
	}
	return string(v)
}

// compare orders two fetched comparable values of this column.
func (k *keyCol) compare(a, b []byte) int {
	switch k.cmp {
	case kcInt:
		return compareIntText(a, b)
	case kcDecimal:
		ra, ok1 := new(big.Rat).SetString(string(a))
		rb, ok2 := new(big.Rat).SetString(string(b))
		if ok1 && ok2 {
			return ra.Cmp(rb)
		}
	case kcFloat:
		fa, err1 := strconv.ParseFloat(string(a), 64)
		fb, err2 := strconv.ParseFloat(string(b), 64)
		if err1 == nil && err2 == nil {
			switch {
			case fa < fb:
				return -1
			case fa > fb:
				return 1
			}
			return 0
		}
	case kcTime:
		ta, ok1 := parseTimeMicros(a)
		tb, ok2 := parseTimeMicros(b)
		if ok1 && ok2 {
			switch {
			case ta < tb:
				return -1
			case ta > tb:
				return 1
			}
			return 0
		}
	}
	return bytes.Compare(a, b)
}

// canon is a value's identity for matching rows fetched by key: values
// that compare equal have the same canon.
func (k *keyCol) canon(v []byte) string {
	switch k.cmp {
	case kcDecimal:
		if r, ok := new(big.Rat).SetString(string(v)); ok {
			return r.RatString()
		}
	case kcFloat:
		if f, err := strconv.ParseFloat(string(v), 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
	case kcTime:
		if t, ok := parseTimeMicros(v); ok {
			return strconv.FormatInt(t, 10)
		}
	case kcInt:
		return strings.TrimLeft(string(v), "+")
	}
	return string(v)
}

// compareIntText orders decimal integer texts without parsing them, so
// that BIGINT UNSIGNED and negative values both work.
func compareIntText(a, b []byte) int {
	na, nb := len(a) > 0 && a[0] == '-', len(b) > 0 && b[0] == '-'
	switch {
	case na && !nb:
		return -1
	case !na && nb:
		return 1
	case na && nb:
		return -compareIntText(a[1:], b[1:])
	}
	a, b = bytes.TrimLeft(a, "0"), bytes.TrimLeft(b, "0")
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return bytes.Compare(a, b)
}

// parseTimeMicros reads a TIME value ([-]hhh:mm:ss[.ffffff]) as
// microseconds.
func parseTimeMicros(v []byte) (int64, bool) {
	s := string(v)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	frac := ""
	if i := strings.IndexByte(s, '.'); i >= 0 {
		s, frac = s[:i], s[i+1:]
	}
	parts := strings.Split(s, ":")
	if len(parts) != 3 {
		return 0, false
	}
	var total int64
	for _, p := range parts {
		n, err := strconv.ParseInt(p, 10, 64)
		if err != nil {
			return 0, false
		}
		total = total*60 + n
	}
	total *= 1_000_000
	if frac != "" {
		frac = (frac + "000000")[:6]
		n, err := strconv.ParseInt(frac, 10, 64)
		if err != nil {
			return 0, false
		}
		total += n
	}
	if neg {
		total = -total
	}
	return total, true
}

// keyTuple is one row's key as fetched: native values (nil = NULL) and the
// comparable forms.
type keyTuple struct {
	native [][]byte
	ord    [][]byte
}

// compareKeys orders two fetched keys.
func (k *keyInfo) compareKeys(a, b *keyTuple) int {
	for i, c := range k.cols {
		if r := c.compare(a.ord[i], b.ord[i]); r != 0 {
			return r
		}
	}
	return 0
}

// canonKey is a key's identity as a map key.
func (k *keyInfo) canonKey(t *keyTuple) string {
	var b strings.Builder
	for i, c := range k.cols {
		s := c.canon(t.ord[i])
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	return b.String()
}

// selectList is the key part of a row query: native values, then the
// comparable forms that differ from them.
func (k *keyInfo) selectList() []string {
	var out []string
	for _, c := range k.cols {
		out = append(out, c.native)
	}
	for _, c := range k.cols {
		if c.fetch != "" {
			out = append(out, c.fetch)
		}
	}
	return out
}

// width is how many columns selectList yields.
func (k *keyInfo) width() int {
	n := len(k.cols)
	for _, c := range k.cols {
		if c.fetch != "" {
			n++
		}
	}
	return n
}

// tupleFrom builds a key from the selectList part of a fetched row; it
// copies the bytes.
func (k *keyInfo) tupleFrom(vals []any) *keyTuple {
	t := &keyTuple{native: make([][]byte, len(k.cols)), ord: make([][]byte, len(k.cols))}
	extra := len(k.cols)
	for i, c := range k.cols {
		t.native[i] = cloneBytes(vals[i])
		if c.fetch != "" {
			t.ord[i] = cloneBytes(vals[extra])
			extra++
		} else {
			t.ord[i] = t.native[i]
		}
	}
	return t
}

func (k *keyInfo) orderBy() string {
	var parts []string
	for _, c := range k.cols {
		parts = append(parts, c.ord)
	}
	return strings.Join(parts, ",")
}

func cloneBytes(v any) []byte {
	switch b := v.(type) {
	case *[]byte:
		if *b == nil {
			return nil
		}
		return append([]byte{}, *b...)
	case []byte:
		if b == nil {
			return nil
		}
		return append([]byte{}, b...)
	case *any:
		return cloneBytes(*b)
	case string:
		return []byte(b)
	}
	return nil
}
