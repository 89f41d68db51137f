package follow

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
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

	lctx, stop := context.WithTimeout(ctx, 12*time.Second)
	defer stop()
	var wg sync.WaitGroup
	var txns int64
	wg.Add(1)
	go func() { defer wg.Done(); txns, _ = churn(lctx, admin, "shop", 2) }()

	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 2))
	moved := 0
	for i := range 5 {
		before, err := Load(ctx, open(t, dst), nameOf([]Pair{{"shop", "shop_copy"}}))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"="+src.String()+" "+dst.String())
		cmd.Stderr = &limited{max: 4096}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(300+rng.IntN(1500)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		after, err := Load(ctx, open(t, dst), before.Name)
		if err != nil {
			t.Fatal(err)
		}
		if after.Position != before.Position {
			moved++
		}
		t.Logf("kill %d: %s -> %s; %s", i+1, before.Position, after.Position, cmd.Stderr.(*limited).String())
	}
	wg.Wait()
	if moved < 3 {
		t.Fatalf("the killed followers moved the position %d times out of 5: they did too little to prove anything", moved)
	}
	sum, err := Run(ctx, src, dst, Options{AllowWrite: true, UntilCaughtUp: true})
	if err != nil {
		t.Fatalf("follow after the kills: %v", err)
	}
	t.Logf("%d transactions on the source; the last follower: %s", txns, sum.Text())
	sameSums(t, checksums(t, admin, "shop"), checksums(t, admin, "shop_copy"))
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

var _ = context.Background
