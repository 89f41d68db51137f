package segment

import (
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/usage"
)

func TestParseStartAt(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name, in string
		want     time.Time
		wantErr  string
	}{
		{"utc", "2026-03-01T12:05:00Z", now.Add(5 * time.Minute), ""},
		{"offset", "2026-03-01T13:05:00+01:00", now.Add(5 * time.Minute), ""},
		{"fraction", "2026-03-01T12:00:01.5Z", now.Add(1500 * time.Millisecond), ""},
		{"past", "2026-03-01T11:00:00Z", now.Add(-time.Hour), ""},
		{"no zone", "2026-03-01T12:05:00", time.Time{}, "not an RFC 3339 time"},
		{"unix seconds", "1772366700", time.Time{}, "not an RFC 3339 time"},
		{"days away", "2026-03-05T12:00:00Z", time.Time{}, "check the date"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseStartAt(tc.in, now)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "--start-at") || !usage.Is(err) {
					t.Fatalf("got %v, want a usage error naming --start-at and containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || !got.Equal(tc.want) {
				t.Fatalf("got %v, %v, want %v", got, err, tc.want)
			}
		})
	}
}
