package target

import (
	"fmt"
	"io"
	"testing"

	"github.com/go-sql-driver/mysql"
)

func TestEndsSession(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"killed", &mysql.MySQLError{Number: ERConnectionKilled, Message: "Connection was killed"}, true},
		{"shutdown", fmt.Errorf("exec: %w", &mysql.MySQLError{Number: ERServerShutdown, Message: "Server shutdown in progress"}), true},
		{"no such table", &mysql.MySQLError{Number: ERNoSuchTable, Message: "Table 'shop.t' doesn't exist"}, false},
		{"eof", io.EOF, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := EndsSession(tc.err); got != tc.want {
				t.Errorf("EndsSession(%v): got %v, want %v", tc.err, got, tc.want)
			}
		})
	}
}

func TestClassifiers(t *testing.T) {
	for _, tc := range []struct {
		name                                string
		code                                uint16
		lost, permanent, privilege, missing bool
	}{
		{"deadlock", ERLockDeadlock, false, false, false, false},
		{"server lost", CRServerLost, true, false, false, false},
		{"killed", ERConnectionKilled, true, false, false, false},
		{"access denied", ERAccessDenied, false, true, true, false},
		{"no such table", ERNoSuchTable, false, true, false, true},
		{"bad database", ERBadDB, false, true, false, false},
		{"role not granted", ERRoleNotGranted, false, false, true, false},
		{"unknown variable", ERUnknownSystemVariable, false, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := [4]bool{ConnLostCode(tc.code), Permanent(tc.code), PrivilegeCode(tc.code), MissingCode(tc.code)}
			want := [4]bool{tc.lost, tc.permanent, tc.privilege, tc.missing}
			if got != want {
				t.Errorf("code %d (lost, permanent, privilege, missing): got %v, want %v", tc.code, got, want)
			}
		})
	}
}
