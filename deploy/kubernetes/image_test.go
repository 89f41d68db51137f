package kubernetes

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestDockerfile checks what the manifests rely on in the image, which
// cannot be built here: a final stage FROM scratch with the binary at the
// entry point, CA certificates where Go looks for them, a numeric non-root
// user (runAsNonRoot can only verify a numeric one), SHAKEDOWN_HOME on
// /tmp, and a build context of the binary alone.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	stages := strings.Split(src, "\nFROM ")
	final := stages[len(stages)-1]
	for _, tc := range []struct {
		name string
		re   string
	}{
		{"final stage from scratch", `^scratch\n`},
		{"the static binary", `(?m)^COPY bin/shakedown /shakedown$`},
		{"CA certificates", `(?m)^COPY --from=\w+ /etc/ssl/certs/ca-certificates\.crt /etc/ssl/certs/ca-certificates\.crt$`},
		{"numeric non-root user", `(?m)^USER [1-9][0-9]*:[1-9][0-9]*$`},
		{"SHAKEDOWN_HOME on /tmp", `SHAKEDOWN_HOME=/tmp\b`},
		{"entry point", `(?m)^ENTRYPOINT \["/shakedown"\]$`},
	} {
		if !regexp.MustCompile(tc.re).MatchString(final) {
			t.Errorf("Dockerfile's final stage: want %s (%s)", tc.name, tc.re)
		}
	}
	ign, err := os.ReadFile("../../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(ign)); !strings.Contains(string(ign), "\n*\n") || got[len(got)-1] != "!bin/shakedown" {
		t.Errorf(".dockerignore: got %q, want everything left out but bin/shakedown", ign)
	}
}
