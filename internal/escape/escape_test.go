package escape

import "testing"

func TestAppend(t *testing.T) {
	in := "a\tb\nc\\d\x00e\rf'g\"h\x1a"
	cases := []struct {
		name  string
		table *Table
		want  string
	}{
		{"literal", &Literal, "a\tb\\nc\\\\d\\0e\\rf\\'g\\\"h\\Z"},
		{"load data", &LoadData, "a\\tb\\nc\\\\d\\0e\\rf'g\"h\x1a"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(Append([]byte("x"), in, tc.table)); got != "x"+tc.want {
				t.Errorf("got %q, want %q", got, "x"+tc.want)
			}
			if got := string(Append(nil, []byte(in), tc.table)); got != tc.want {
				t.Errorf("bytes: got %q, want %q", got, tc.want)
			}
			if got := string(Append(nil, "plain", tc.table)); got != "plain" {
				t.Errorf("got %q, want %q", got, "plain")
			}
		})
	}
}
