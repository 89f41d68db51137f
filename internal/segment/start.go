package segment

import (
	"strings"
	"time"

	"github.com/shakedown/shakedown/internal/usage"
)

// MaxLead is how far ahead --start-at may be: a start days away is a typo.
const MaxLead = 24 * time.Hour

// ParseStartAt reads --start-at, an RFC 3339 time such as
// 2026-03-01T12:00:00Z (fractions of a second allowed). A time more than
// MaxLead after now is refused as a likely mistake; one already past is
// returned as it is, for the caller to judge (Late).
func ParseStartAt(s string, now time.Time) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(s))
	if err != nil {
		return time.Time{}, usage.Errorf("--start-at %q: not an RFC 3339 time; write e.g. %s (UTC) or with an offset, 2026-03-01T13:00:00+01:00",
			s, now.UTC().Add(time.Minute).Truncate(time.Minute).Format(time.RFC3339))
	}
	if t.Sub(now) > MaxLead {
		return time.Time{}, usage.Errorf("--start-at %s is %s from now, more than %s: check the date and the time zone", s, t.Sub(now).Round(time.Minute), MaxLead)
	}
	return t, nil
}
