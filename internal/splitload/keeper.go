package splitload

import (
	"context"
	"errors"
	"fmt"

	"github.com/shakedown/shakedown/internal/store"
)

// Keeper records the steps one runner measured in the store the runners
// share and, from the first step the store does not take, in a file of the
// runner's own: that step and every later one. The measurement goes on,
// and report --import adds the file to the store later. A run's runner and
// a sweep's keep their steps this one way.
type Keeper struct {
	st      *store.Store
	load    *store.Split
	me      *store.Runner
	path    string // the file, store.UnsavedPath
	unsaved *store.Unsaved
}

// NewKeeper keeps the steps of runner me of load in st, or in the file
// at path once st is lost.
func NewKeeper(st *store.Store, load *store.Split, me *store.Runner, path string) *Keeper {
	return &Keeper{st: st, load: load, me: me, path: path}
}

// Keep records run. The first time the store does not take a step, say is
// told once, with the store, its error and the file that holds the steps
// from then on. The error is the file's, or the store's refusal of a step
// already reported.
func (k *Keeper) Keep(ctx context.Context, run *store.Run, say func(string)) error {
	if k.unsaved == nil {
		_, err := k.st.AddRun(ctx, run)
		if err == nil || errors.Is(err, store.ErrReported) {
			return err
		}
		k.unsaved = store.NewUnsaved(k.st.Path(), k.load, k.me)
		say(fmt.Sprintf("the store %s could not take the result (%v): this runner keeps measuring and keeps its results in %s",
			k.st.Path(), err, k.path))
	}
	k.unsaved.Add(run)
	if err := k.unsaved.Write(k.path); err != nil {
		return fmt.Errorf("keep the results the store did not take: %w", err)
	}
	return nil
}

// Lost is nil while the store took every step; after that, the error
// that says which file holds the steps it did not take.
func (k *Keeper) Lost() error {
	if k.unsaved == nil {
		return nil
	}
	return store.ErrUnsaved(k.unsaved, k.path)
}
