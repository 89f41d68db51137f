package workload

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

func TestStmtStats(t *testing.T) {
	s := NewStmtStats([]string{"a", "b"})
	r1, r2 := s.Recorder(), s.Recorder()
	for i := 0; i < 300; i++ { // more than a batch, so some flush on their own
		r1.Record(0, time.Millisecond)
	}
	r2.Record(1, 2*time.Millisecond)
	r2.Record(7, time.Millisecond) // out of range: ignored
	r1.Flush()
	r2.Flush()
	out := s.Outcome()
	if out[0].Name != "a" || out[0].Latency.Count() != 300 || out[1].Latency.Count() != 1 {
		t.Fatalf("got counts %d and %d, want 300 and 1", out[0].Latency.Count(), out[1].Latency.Count())
	}

	// A reset drops what was recorded and what a recorder still holds.
	r1.Record(0, time.Millisecond)
	s.Reset()
	r1.Flush()
	r1.Record(0, 3*time.Millisecond)
	r1.Flush()
	out = s.Outcome()
	if out[0].Latency.Count() != 1 || out[0].Latency.Max() != 3*time.Millisecond {
		t.Errorf("after reset: got %d values (max %v), want the one recorded after it", out[0].Latency.Count(), out[0].Latency.Max())
	}

	var nilRec *StmtRecorder // workloads record without checking for one
	nilRec.Record(0, time.Second)
	nilRec.Flush()
}

func TestStatementOf(t *testing.T) {
	cause := &mysql.MySQLError{Number: 1242}
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"plain", cause, -1},
		{"marked", InStatement(3, cause), 3},
		{"wrapped again", fmt.Errorf("thread 1: %w", InStatement(0, cause)), 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := StatementOf(tc.err); got != tc.want {
				t.Errorf("got %d, want %d", got, tc.want)
			}
			var me *mysql.MySQLError
			if !errors.As(tc.err, &me) || me.Number != 1242 {
				t.Errorf("the cause is lost: %v", tc.err)
			}
		})
	}
}
