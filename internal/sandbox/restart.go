package sandbox

import (
	"context"
	"fmt"
	"os"

	"github.com/shakedown/shakedown/internal/flavour"
)

// Restart stops a sandbox's server cleanly and starts it again with exactly
// settings ("var=value", as Instance.Settings lists them; the sandbox's
// defaults are not added again), on the same port and data. The settings are
// saved, so a later Start keeps them; to go back, Restart again with the
// Settings the Instance had before. Settings fixed when the data directory
// was made (see FixedAtCreation) must keep their values. If the server does
// not come up with the new settings, the error carries the tail of its error
// log and the sandbox is left stopped, with the new settings saved.
func Restart(ctx context.Context, home, name string, settings []string) (*Instance, error) {
	r, err := load(home, name)
	if err != nil {
		return nil, err
	}
	if r.Flavour == string(flavour.TiDB) || r.isGalera() {
		// Its command line is not MariaDB's: start it again as it was.
		if len(settings) > 0 {
			return nil, outcomef(ErrInvalid, "restart sandbox %s: a %s sandbox takes no new server settings: SET GLOBAL changes its variables", name, label(r.Flavour))
		}
		if err := r.terminateNodes(ctx, stopGrace); err != nil {
			return nil, fmt.Errorf("restart sandbox %s: %w", name, err)
		}
		if err := terminate(ctx, r.PID, r.DataDir, stopGrace); err != nil {
			return nil, fmt.Errorf("restart sandbox %s: %w", name, err)
		}
		return r.startAgain(ctx, "restart sandbox "+name)
	}
	parsed, err := parseSet(settings)
	if err != nil {
		return nil, err
	}
	// A setting given twice keeps the last value, as on Up.
	parsed = mergeSettings(nil, parsed)
	old, _ := parseSet(r.Settings)
	was := map[string]string{}
	for _, o := range old {
		was[o.key] = o.value
	}
	now := map[string]bool{}
	for _, s := range parsed {
		now[s.key] = true
	}
	for _, o := range old {
		if FixedAtCreation(o.key) && !now[o.key] {
			return nil, outcomef(ErrInvalid, "restart sandbox %s: %s is fixed when the sandbox is created: keep %s=%s", name, o.key, o.key, o.value)
		}
	}
	for _, s := range parsed {
		if v, ok := was[s.key]; FixedAtCreation(s.key) && (!ok || v != s.value) {
			if !ok {
				v = "the server's default"
			}
			return nil, outcomef(ErrInvalid, "restart sandbox %s: %s is fixed when the sandbox is created (%s), not %s", name, s.key, v, s.value)
		}
	}
	if err := r.terminateNodes(ctx, stopGrace); err != nil {
		return nil, fmt.Errorf("restart sandbox %s: %w", name, err)
	}
	if err := terminate(ctx, r.PID, r.DataDir, stopGrace); err != nil {
		return nil, fmt.Errorf("restart sandbox %s: %w", name, err)
	}
	srv := &Server{Path: r.Bin, Basedir: r.Basedir, Flavour: r.Flavour, Version: r.Version}
	r.Settings = settingStrings(parsed)
	r.Args = r.serverArgs(srv, parsed, os.Geteuid() == 0)
	r.Running = false
	if err := r.save(); err != nil {
		return nil, fmt.Errorf("restart sandbox %s: %w", name, err)
	}
	return r.startAgain(ctx, "restart sandbox "+name)
}

// startAgain starts the server of a sandbox made before, as Start and
// Restart do. A server that does not come up is ended; what names the
// action in the error, which quotes the server's logs.
func (r *record) startAgain(ctx context.Context, what string) (*Instance, error) {
	if r.isGalera() {
		if err := r.startCluster(ctx, what); err != nil {
			_ = r.terminateNodes(context.WithoutCancel(ctx), 0)
			_ = terminate(context.WithoutCancel(ctx), r.PID, r.DataDir, 0)
			return nil, err
		}
		r.Running = true
		inst := r.Instance
		return &inst, nil
	}
	p, err := r.start(ctx)
	if err != nil {
		if p != nil {
			_ = terminate(context.WithoutCancel(ctx), p.pid, r.DataDir, 0)
		}
		return nil, startError(what, err, true, r.ErrorLog, r.consoleLog())
	}
	if r.isVitess() {
		if err := r.startVitess(ctx); err != nil {
			_ = terminate(context.WithoutCancel(ctx), r.Gate.PID, r.Gate.DataDir, 0)
			_ = terminate(context.WithoutCancel(ctx), p.pid, r.DataDir, 0)
			return nil, startError(what+" (vtcombo)", err, true, r.Gate.ErrorLog)
		}
	}
	r.Running = true
	inst := r.Instance
	return &inst, nil
}

// FixedAtCreation reports whether a server variable is fixed when a
// sandbox's data directory is made, so that a restart cannot change it.
// (innodb_log_file_size is passed at creation too, but servers resize the
// redo log on a restart.)
func FixedAtCreation(name string) bool {
	return initSettings[name] && name != "innodb_log_file_size"
}
