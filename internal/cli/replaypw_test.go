package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/shakedown/shakedown/internal/capture"
	"github.com/shakedown/shakedown/internal/sandbox/sandboxtest"
	"github.com/shakedown/shakedown/internal/target"
)

// TestReplayWrongPassword: a wrong password is explained as every command
// explains it (access denied for the user, where the password came from,
// what to check), not as the driver's raw error, and never printed.
func TestReplayWrongPassword(t *testing.T) {
	live, err := target.Parse(sandboxtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	capFile := filepath.Join(t.TempDir(), "x.capture")
	f, err := os.Create(capFile)
	if err != nil {
		t.Fatal(err)
	}
	w, _ := capture.NewWriter(f, nil, time.Now())
	w.Write(&capture.Record{Session: "1", Seq: 1, SQL: "SELECT 1"})
	w.Flush()
	f.Close()
	const pw = "Wrong-Replay-Pw-5"
	ep := live.Endpoints()[0]
	bad := "mysql://" + live.User + ":" + pw + "@" + ep.String() + "/" + live.DB
	code, stdout, stderr := runCLI(context.Background(), "replay", capFile, "--control", sandboxtest.URL(t), "--candidate", bad)
	want := `candidate (mysql://` + live.User + `@` + ep.String() + `/` + live.DB + `): connect to ` + ep.String() + `: access denied for user "` + live.User + `" (password from the URL): check the user and its password`
	if code != ExitFailure || !strings.Contains(stderr, want) {
		t.Errorf("got exit %d, stderr %q; want exit %d and %q", code, stderr, ExitFailure, want)
	}
	if strings.Contains(stdout+stderr, pw) {
		t.Errorf("got the password in the output: %q", stdout+stderr)
	}
	if strings.Contains(stderr, "Error 1045") {
		t.Errorf("got the driver's raw error %q, want it explained", stderr)
	}
}
