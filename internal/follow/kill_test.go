package follow

import (
	"context"
	"database/sql"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

// A follower killed with SIGKILL at random moments under load, and
// started again each time, loses no row and doubles none.
func TestKilledFollowerResumes(t *testing.T) {
	inst := sandboxtest.Start(t, binlogSettings...)
	ctx := testCtx(t, 4*time.Minute)
	src, dst := withDB(t, inst.URL(), "shop"), withDB(t, inst.URL(), "shop_copy")
	admin := open(t, src)
	shop(t, admin, "shop", 60)
	from := copyDB(t, ctx, src, dst)
	// The first follower starts at the copy's position; it saves it
	// before it applies anything.
	if _, err := Run(ctx, src, dst, Options{AllowWrite: true, From: from, Duration: time.Millisecond}); err != nil {
		t.Fatal(err)
	}

	txns := killDuringLoad(t, ctx, src, dst, admin, 5, 12*time.Second)
	sum, err := Run(ctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true})
	if err != nil {
		t.Fatalf("follow after the kills: %v", err)
	}
	t.Logf("%d transactions on the source; the last follower: %s", txns, sum.Text())
	sameSums(t, checksums(t, admin, "shop"), checksums(t, admin, "shop_copy"))
	if rep := compare(t, ctx, src, dst); !rep.Equal {
		t.Errorf("verify after the kills: %s", reportText(rep))
	}
}

// killDuringLoad runs churn on the source (for at least load) while a follower
// process is started, killed with SIGKILL at a random moment and started
// again, rounds times; it fails the test when the followers moved the
// saved position in fewer than half the rounds. It returns the source's
// transactions.
func killDuringLoad(t *testing.T, ctx context.Context, src, dst *target.Target, admin *sql.DB, rounds int, load time.Duration) (txns int64) {
	t.Helper()
	lctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); txns, _ = churn(lctx, admin, "shop", 2) }()
	started := time.Now()
	defer func() {
		time.Sleep(time.Until(started.Add(load)))
		stop()
		wg.Wait()
	}()

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	name := nameOf([]Pair{{src.DB, dst.DB}})
	moved := 0
	for i := range rounds {
		before, err := Load(ctx, open(t, dst), name)
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+src.String()+" "+dst.String())
		out := &limited{max: 4096}
		cmd.Stderr = out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Killed once it is at work (it has applied a first batch), at a
		// random moment after.
		deadline := time.Now().Add(time.Minute)
		for {
			s, err := Load(ctx, open(t, dst), name)
			if err == nil && s.Position != before.Position {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("the follower process applied nothing within a minute: %s", out.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
		time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		after, err := Load(ctx, open(t, dst), name)
		if err != nil {
			t.Fatal(err)
		}
		if after.Position != before.Position {
			moved++
		}
		t.Logf("kill %d: %s -> %s; %s", i+1, before.Position, after.Position, out.String())
	}
	if moved*2 < rounds {
		t.Fatalf("the killed followers moved the position %d times out of %d: they did too little to prove anything", moved, rounds)
	}
	return txns
}

// limited keeps the first max bytes written to it.
type limited struct {
	mu  sync.Mutex
	b   []byte
	max int
}

func (l *limited) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := l.max - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limited) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}
