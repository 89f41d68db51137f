package capture

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/shakedown/shakedown/internal/wire/lenenc"
)

// errShort is a parameter block that ends early.
var errShort = fmt.Errorf("parameters end early")

// decodeParams reads COM_STMT_EXECUTE's parameters (after the statement
// id): flags, iteration count, NULL bitmap, types and binary values.
func decodeParams(b []byte, st *stmtInfo) ([]any, error) {
	n := st.nparams
	if n == 0 {
		return nil, nil
	}
	if len(b) < 5 {
		return nil, errShort
	}
	b = b[5:]
	nb := (n + 7) / 8
	if len(b) < nb+1 {
		return nil, errShort
	}
	nulls := b[:nb]
	b = b[nb:]
	bound := b[0]
	b = b[1:]
	if bound == 1 {
		if len(b) < 2*n {
			return nil, errShort
		}
		st.types = append(st.types[:0], b[:2*n]...)
		b = b[2*n:]
	}
	if len(st.types) != 2*n {
		return nil, fmt.Errorf("parameter types never sent")
	}
	out := make([]any, n)
	for i := 0; i < n; i++ {
		if nulls[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		if d, ok := st.longData[i]; ok {
			out[i] = bytesParam(d)
			continue
		}
		v, rest, err := binaryValue(b, st.types[2*i], st.types[2*i+1]&0x80 != 0)
		if err != nil {
			return nil, fmt.Errorf("parameter %d: %w", i+1, err)
		}
		out[i], b = v, rest
	}
	return out, nil
}

// afterQueryAttrs reads past the query attributes COM_QUERY starts with
// when CLIENT_QUERY_ATTRIBUTES was negotiated, and returns the statement
// that follows: the parameter count, the parameter set count (1), and for
// a count above 0 the NULL bitmap, the new-params-bound flag, each
// attribute's type and name, and the values in the binary protocol. The
// attributes are the application's annotations of a statement (a trace
// id), not part of it, and are not kept.
func afterQueryAttrs(b []byte) ([]byte, error) {
	n, w := lenenc.Read(b)
	if w == 0 {
		return nil, errShort
	}
	b = b[w:]
	sets, w := lenenc.Read(b)
	if w == 0 {
		return nil, errShort
	}
	b = b[w:]
	if n == 0 {
		return b, nil
	}
	if sets != 1 {
		return nil, fmt.Errorf("%d parameter sets, want 1", sets)
	}
	// Each attribute takes three bytes at least: its type and a name.
	if n > uint64(len(b))/3 {
		return nil, errShort
	}
	k := int(n)
	nb := (k + 7) / 8
	if len(b) < nb+1 {
		return nil, errShort
	}
	nulls, bound := b[:nb], b[nb]
	b = b[nb+1:]
	if bound != 1 {
		return nil, fmt.Errorf("attribute types not sent")
	}
	types := make([]byte, 0, 2*k)
	for i := 0; i < k; i++ {
		if len(b) < 2 {
			return nil, errShort
		}
		types = append(types, b[0], b[1])
		name, w := lenenc.Read(b[2:])
		if w == 0 || name > uint64(len(b)-2-w) {
			return nil, errShort
		}
		b = b[2+w+int(name):]
	}
	for i := 0; i < k; i++ {
		if nulls[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		var err error
		if _, b, err = binaryValue(b, types[2*i], types[2*i+1]&0x80 != 0); err != nil {
			return nil, fmt.Errorf("attribute %d: %w", i+1, err)
		}
	}
	return b, nil
}

// fixedInt reads an integer of the binary protocol: n bytes (1, 2, 4 or
// 8), little-endian, sign-extended unless unsigned. An unsigned 8-byte
// value stays a uint64, which an int64 may not hold.
func fixedInt(b []byte, n int, unsigned bool) (any, []byte, error) {
	if len(b) < n {
		return nil, nil, errShort
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	switch {
	case unsigned && n == 8:
		return v, b[n:], nil
	case unsigned:
		return int64(v), b[n:], nil
	}
	shift := 64 - 8*n
	return int64(v<<shift) >> shift, b[n:], nil
}

// binaryValue reads one value of the binary protocol.
func binaryValue(b []byte, typ byte, unsigned bool) (any, []byte, error) {
	need := func(k int) error {
		if len(b) < k {
			return errShort
		}
		return nil
	}
	switch typ {
	case 0x06: // NULL
		return nil, b, nil
	case 0x01: // TINY
		return fixedInt(b, 1, unsigned)
	case 0x02, 0x0d: // SHORT, YEAR
		return fixedInt(b, 2, unsigned)
	case 0x03, 0x09: // LONG, INT24
		return fixedInt(b, 4, unsigned)
	case 0x08: // LONGLONG
		return fixedInt(b, 8, unsigned)
	case 0x04: // FLOAT
		if err := need(4); err != nil {
			return nil, nil, err
		}
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))), b[4:], nil
	case 0x05: // DOUBLE
		if err := need(8); err != nil {
			return nil, nil, err
		}
		return math.Float64frombits(binary.LittleEndian.Uint64(b)), b[8:], nil
	case 0x07, 0x0a, 0x0c: // TIMESTAMP, DATE, DATETIME
		if err := need(1); err != nil {
			return nil, nil, err
		}
		k := int(b[0])
		if err := need(1 + k); err != nil {
			return nil, nil, err
		}
		return dateValue(b[1:1+k], typ == 0x0a), b[1+k:], nil
	case 0x0b: // TIME
		if err := need(1); err != nil {
			return nil, nil, err
		}
		k := int(b[0])
		if err := need(1 + k); err != nil {
			return nil, nil, err
		}
		return timeValue(b[1 : 1+k]), b[1+k:], nil
	}
	// Everything else is a length-encoded string: VARCHAR, DECIMAL, BLOB,
	// JSON, ENUM, SET, BIT, GEOMETRY.
	n, w := lenenc.Read(b)
	if w == 0 || n > uint64(len(b)-w) {
		return nil, nil, errShort
	}
	return bytesParam(b[w : w+int(n)]), b[w+int(n):], nil
}

func dateValue(b []byte, dateOnly bool) string {
	var y, mo, d, h, mi, s, us int
	if len(b) >= 4 {
		y, mo, d = int(binary.LittleEndian.Uint16(b)), int(b[2]), int(b[3])
	}
	if len(b) >= 7 {
		h, mi, s = int(b[4]), int(b[5]), int(b[6])
	}
	if len(b) >= 11 {
		us = int(binary.LittleEndian.Uint32(b[7:]))
	}
	if dateOnly {
		return fmt.Sprintf("%04d-%02d-%02d", y, mo, d)
	}
	if us != 0 {
		return fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d.%06d", y, mo, d, h, mi, s, us)
	}
	return fmt.Sprintf("%04d-%02d-%02d %02d:%02d:%02d", y, mo, d, h, mi, s)
}

func timeValue(b []byte) string {
	if len(b) < 8 {
		return "00:00:00"
	}
	sign := ""
	if b[0] == 1 {
		sign = "-"
	}
	days := int(binary.LittleEndian.Uint32(b[1:]))
	h := days*24 + int(b[5])
	s := fmt.Sprintf("%s%02d:%02d:%02d", sign, h, b[6], b[7])
	if len(b) >= 12 {
		if us := binary.LittleEndian.Uint32(b[8:]); us != 0 {
			s += fmt.Sprintf(".%06d", us)
		}
	}
	return s
}

// bytesParam keeps text as a string and other bytes as {"hex": "..."}.
func bytesParam(b []byte) any {
	if utf8.Valid(b) {
		return string(b)
	}
	return map[string]string{"hex": hex.EncodeToString(b)}
}
