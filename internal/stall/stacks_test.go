package stall

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

func TestFrameFunction(t *testing.T) {
	tests := []struct{ name, line, want string }{
		{"no address", "#0  __futex_abstimed_wait_common64 (private=0, cancel=true) at ./nptl/futex-internal.c:57", "__futex_abstimed_wait_common64"},
		{"address", "#6  0x0000563f765cda01 in tpool::thread_pool_generic::wait_for_tasks(std::unique_lock<std::mutex>&, tpool::worker_data*) ()", "tpool::thread_pool_generic::wait_for_tasks"},
		{"unknown", "#9  0x00007f86f9ed44a3 in ?? () from /lib/x86_64-linux-gnu/libstdc++.so.6", "??"},
		{"not a frame", "Thread 9 (Thread 0x7786d79a86c0 (LWP 23172) \"mariadbd\"):", ""},
		{"address without in", "#1  0x0000563f765cda01", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := frameFunction(tt.line); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// A real gdb read of an idle MariaDB 10.11: every thread counted once, the
// commonest stack first.
func TestParseStacks(t *testing.T) {
	b, err := os.ReadFile("testdata/gdb-mariadbd.txt")
	if err != nil {
		t.Fatal(err)
	}
	rows := parseStacks(string(b))
	threads := 0
	prev := 1 << 30
	for _, r := range rows {
		n, err := strconv.Atoi(r[0])
		if err != nil || n > prev {
			t.Errorf("row %v: got count %q after %d, want counts descending", r, r[0], prev)
		}
		prev = n
		threads += n
	}
	if want := strings.Count(string(b), "\nThread "); threads != want {
		t.Errorf("got %d threads in %d stacks, want %d", threads, len(rows), want)
	}
	if len(rows) == 0 || !strings.Contains(rows[0][1], "start_thread") {
		t.Errorf("got stacks %v, want the commonest to keep its frames down to start_thread", rows)
	}
}

func FuzzParseStacks(f *testing.F) {
	f.Add("Thread 1 (LWP 1):\n#0  poll () at x.c:1\n#1  0x1 in main ()\n")
	f.Add("#0 \n#1  0x in\nThread")
	f.Fuzz(func(t *testing.T, out string) {
		for _, r := range parseStacks(out) {
			if n, err := strconv.Atoi(r[0]); err != nil || n < 1 || r[1] == "" {
				t.Errorf("parseStacks(%q) gave row %q, want a count >= 1 and a stack", out, r)
			}
		}
	})
}
