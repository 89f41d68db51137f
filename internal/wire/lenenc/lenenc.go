// Package lenenc is the MySQL protocol's length-encoded integer, which
// both ends of a connection write: the client (wire), the fake server
// (wire/wiretest), and the capture decoder, which reads both directions.
// wire and wiretest are peers and cannot import each other, so the
// encoding lives below them.
package lenenc

import "encoding/binary"

// Read reads a length-encoded integer from the front of p and returns it
// with its width in bytes. Width 0 means p is too short or does not start
// with one (0xff); 0xfb, a NULL in a text row, reads as 0 of width 1.
func Read(p []byte) (uint64, int) {
	if len(p) == 0 {
		return 0, 0
	}
	switch p[0] {
	case 0xfb:
		return 0, 1
	case 0xfc:
		if len(p) < 3 {
			return 0, 0
		}
		return uint64(p[1]) | uint64(p[2])<<8, 3
	case 0xfd:
		if len(p) < 4 {
			return 0, 0
		}
		return uint64(p[1]) | uint64(p[2])<<8 | uint64(p[3])<<16, 4
	case 0xfe:
		if len(p) < 9 {
			return 0, 0
		}
		return binary.LittleEndian.Uint64(p[1:]), 9
	case 0xff:
		return 0, 0
	}
	return uint64(p[0]), 1
}

// Append appends n as a length-encoded integer.
func Append(b []byte, n uint64) []byte {
	switch {
	case n < 251:
		return append(b, byte(n))
	case n < 1<<16:
		return append(b, 0xfc, byte(n), byte(n>>8))
	case n < 1<<24:
		return append(b, 0xfd, byte(n), byte(n>>8), byte(n>>16))
	}
	return append(b, 0xfe, byte(n), byte(n>>8), byte(n>>16), byte(n>>24), byte(n>>32), byte(n>>40), byte(n>>48), byte(n>>56))
}
