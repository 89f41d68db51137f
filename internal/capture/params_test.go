package capture

import (
	"math"
	"testing"
)

func TestBinaryIntegers(t *testing.T) {
	cases := []struct {
		name     string
		typ      byte
		unsigned bool
		b        []byte
		want     any
	}{
		{"TINY -1", 0x01, false, []byte{0xff}, int64(-1)},
		{"TINY UNSIGNED 255", 0x01, true, []byte{0xff}, int64(255)},
		{"SHORT -2", 0x02, false, []byte{0xfe, 0xff}, int64(-2)},
		{"YEAR 2024", 0x0d, true, []byte{0xe8, 0x07}, int64(2024)},
		{"LONG -3", 0x03, false, []byte{0xfd, 0xff, 0xff, 0xff}, int64(-3)},
		{"INT24 UNSIGNED max", 0x09, true, []byte{0xff, 0xff, 0xff, 0xff}, int64(math.MaxUint32)},
		{"LONGLONG min", 0x08, false, []byte{0, 0, 0, 0, 0, 0, 0, 0x80}, int64(math.MinInt64)},
		{"LONGLONG UNSIGNED max", 0x08, true, []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, uint64(math.MaxUint64)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, rest, err := binaryValue(append(tc.b, 9), tc.typ, tc.unsigned)
			if err != nil || got != tc.want || len(rest) != 1 || rest[0] != 9 {
				t.Errorf("got %v (%T), rest %v, err %v; want %v (%T), rest [9]", got, got, rest, err, tc.want, tc.want)
			}
			if _, _, err := binaryValue(tc.b[:len(tc.b)-1], tc.typ, tc.unsigned); err != errShort {
				t.Errorf("one byte short: got error %v, want %v", err, errShort)
			}
		})
	}
}
