package lenenc

import "testing"

func TestRoundTrip(t *testing.T) {
	for _, n := range []uint64{0, 250, 251, 65535, 65536, 1<<24 - 1, 1 << 24, 1 << 40} {
		b := Append(nil, n)
		got, size := Read(b)
		if got != n || size != len(b) {
			t.Errorf("%d: got %d in %d bytes, want %d in %d", n, got, size, n, len(b))
		}
	}
}

func TestReadShortOrNot(t *testing.T) {
	cases := []struct {
		name  string
		p     []byte
		n     uint64
		width int
	}{
		{"empty", nil, 0, 0},
		{"NULL", []byte{0xfb}, 0, 1},
		{"ERR header", []byte{0xff, 1}, 0, 0},
		{"short 2-byte", []byte{0xfc, 1}, 0, 0},
		{"short 3-byte", []byte{0xfd, 1, 2}, 0, 0},
		{"short 8-byte", []byte{0xfe, 1, 2, 3, 4, 5, 6, 7}, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if n, w := Read(tc.p); n != tc.n || w != tc.width {
				t.Errorf("got %d of width %d, want %d of width %d", n, w, tc.n, tc.width)
			}
		})
	}
}
