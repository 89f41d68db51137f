package loaddata

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestRefused(t *testing.T) {
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"mysql 5.7 not allowed", &mysql.MySQLError{Number: 1148, Message: "The used command is not allowed with this MySQL version"}, true},
		{"wrapped", fmt.Errorf("copy t: %w", &mysql.MySQLError{Number: 4166, Message: "disabled"}), true},
		{"vtgate, a sharded keyspace", &mysql.MySQLError{Number: 1235, Message: "LOAD is not supported on sharded keyspace"}, true},
		{"access denied", &mysql.MySQLError{Number: 1045, Message: "Access denied"}, false},
		{"plain error", errors.New("connection reset"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Refused(tc.err); got != tc.want {
				t.Errorf("Refused(%v): got %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}
