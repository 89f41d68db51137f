package target

import (
	"context"
	"database/sql/driver"
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// flakyConnector fails its first fails connects with err.
type flakyConnector struct {
	fails, calls int
	err          error
}

func (f *flakyConnector) Connect(context.Context) (driver.Conn, error) {
	f.calls++
	if f.calls <= f.fails {
		return nil, f.err
	}
	return nil, nil
}

func (f *flakyConnector) Driver() driver.Driver { return nil }

func TestRetryConnector(t *testing.T) {
	denied := &mysql.MySQLError{Number: 1045, Message: "Access denied"}
	cases := []struct {
		name      string
		fails     int
		err       error
		wantCalls int
		wantErr   error
	}{
		{"no fault", 0, nil, 1, nil},
		{"one malformed challenge is tried again", 1, mysql.ErrMalformPkt, 2, nil},
		{"two in a row are the error", 2, mysql.ErrMalformPkt, 2, mysql.ErrMalformPkt},
		{"access denied is not tried again", 1, denied, 1, denied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &flakyConnector{fails: tc.fails, err: tc.err}
			_, err := retryConnector{f}.Connect(context.Background())
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("got error %v, want %v", err, tc.wantErr)
			}
			if f.calls != tc.wantCalls {
				t.Errorf("got %d connects, want %d", f.calls, tc.wantCalls)
			}
		})
	}
}
