package workload

import (
	"errors"
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
	r2.Fail(1, &mysql.MySQLError{Number: 1213})
	r2.Fail(1, errors.New("not a server error"))
	r2.Fail(7, errors.New("out of range: ignored"))
	r1.Flush()
	r2.Flush()
	out := s.Outcome()
	if out[0].Name != "a" || out[0].Latency.Count() != 300 || out[1].Latency.Count() != 1 {
		t.Fatalf("got counts %d and %d, want 300 and 1", out[0].Latency.Count(), out[1].Latency.Count())
	}
	if out[1].Errors[1213] != 1 || out[1].Errors[0] != 1 || len(out[0].Errors) != 0 {
		t.Errorf("got errors %v and %v, want 1213 and 0 once each for b", out[0].Errors, out[1].Errors)
	}

	// A reset drops what was recorded and what a recorder still holds.
	r1.Record(0, time.Millisecond)
	s.Reset()
	r1.Flush()
	r1.Record(0, 3*time.Millisecond)
	r1.Flush()
	out = s.Outcome()
	if out[0].Latency.Count() != 1 || out[0].Latency.Max() != 3*time.Millisecond || len(out[1].Errors) != 0 {
		t.Errorf("after reset: got %d values (max %v) and errors %v, want the one recorded after it", out[0].Latency.Count(), out[0].Latency.Max(), out[1].Errors)
	}

	var nilRec *StmtRecorder // workloads record without checking for one
	nilRec.Record(0, time.Second)
	nilRec.Fail(0, errors.New("x"))
	nilRec.Flush()
}
