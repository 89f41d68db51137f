package all_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/shakedown/shakedown/internal/client/fakeconn"
	"github.com/shakedown/shakedown/internal/randgen"
	"github.com/shakedown/shakedown/internal/workload"
	_ "github.com/shakedown/shakedown/internal/workload/all"
)

// Every workload says how many statements a thread prepares, and says it
// right: what its worker prepares on a fake server is counted.
func TestPreparedStatementsAreExact(t *testing.T) {
	sqlFile := filepath.Join(t.TempDir(), "q.sql")
	if err := os.WriteFile(sqlFile, []byte("SELECT {{uniform 1 9}};\nUPDATE t SET v = 1 WHERE id = {{uniform 1 9}};\n-- @event e\nBEGIN;\nSELECT 1;\nCOMMIT;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := map[string][][]string{
		"oltp_read_write": {nil, {"--tables=3"}, {"--skip-trx=on", "--range-selects=off"}},
		"oltp_read_only":  {{"--tables=2"}},
		"hotrow":          {nil, {"--skip-trx=on"}},
		"ping":            {nil, {"--ping-mode=select"}},
		"sql":             {{"--file=" + sqlFile}},
	}
	for _, name := range workload.Names() {
		meta, _ := workload.Lookup(name)
		sets := flags[name]
		if sets == nil {
			sets = [][]string{nil}
		}
		for _, args := range sets {
			t.Run(strings.Join(append([]string{name}, args...), " "), func(t *testing.T) {
				g := meta.New()
				ps, ok := g.(workload.PreparedStatementser)
				if !ok {
					t.Fatalf("%s does not say how many statements it prepares", name)
				}
				if f, ok := g.(workload.Flagser); ok {
					if err := f.Flags().Parse(args); err != nil {
						t.Fatal(err)
					}
				}
				if v, ok := g.(workload.Validator); ok {
					if err := v.Validate(); err != nil {
						t.Fatal(err)
					}
				}
				srv := &fakeconn.Server{PS: true}
				var counts workload.Counts
				conn, _ := srv.Connect(context.Background(), 0, &counts)
				env := &workload.WorkerEnv{ID: 0, Threads: 1, Conn: conn, Rand: randgen.Defaults().New(0), Counts: &counts,
					Dial: func(ctx context.Context) (workload.Conn, error) { return srv.Connect(ctx, 0, &counts) }}
				if _, err := g.(workload.Opser).NewWorker(context.Background(), env); err != nil {
					t.Fatal(err)
				}
				if got, want := srv.Received(), ps.PreparedStatements(); got != want {
					t.Errorf("the worker prepared %d statements, PreparedStatements says %d", got, want)
				}
			})
		}
	}
}
