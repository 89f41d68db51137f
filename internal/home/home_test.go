package home

import "testing"

func TestDir(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"SHAKEDOWN_HOME first", map[string]string{"SHAKEDOWN_HOME": "/srv/sd", "HOME": "/home/u"}, "/srv/sd"},
		{"else below HOME", map[string]string{"HOME": "/home/u"}, "/home/u/.shakedown"},
		{"neither", map[string]string{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Dir(func(k string) string { return tt.env[k] }); got != tt.want {
				t.Errorf("Dir: got %q, want %q", got, tt.want)
			}
		})
	}
}
