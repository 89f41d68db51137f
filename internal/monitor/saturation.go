package monitor

import "fmt"

// hostSaturated says why the host's CPU is saturated, from the share of it
// the server's process and shakedown's own took: host CPU is everything on
// the host, and a saturation caused by another process (a backup, a build,
// another benchmark) must not be put on the server.
func hostSaturated(d *delta) string {
	var ticks float64
	for _, s := range cpuStates {
		v, _ := d.counter("host.cpu." + s)
		ticks += v
	}
	idle, _ := d.counter("host.cpu.idle")
	iowait, _ := d.counter("host.cpu.iowait")
	steal, _ := d.counter("host.cpu.steal")
	// Busy CPU in seconds of one core, as the processes' times are.
	busy := (ticks - idle - iowait - steal) / userHZ
	srv, srvOK := d.counter("proc.server.cpu_s")
	cli, cliOK := d.counter("proc.client.cpu_s")
	if d.sec <= 0 || busy <= 0 {
		return "host CPU saturated"
	}
	cores := func(cpuS float64) string { return fmt.Sprintf("%.2f", cpuS/d.sec) }
	of := fmt.Sprintf("of %.1f cores busy", busy/d.sec)
	if !srvOK {
		if cliOK && cli >= busy/2 {
			return "host CPU saturated, by shakedown itself: " + cores(cli) + " " + of + " (the server's process is not on this host or was not found)"
		}
		return "host CPU saturated (the server's process is not on this host or was not found, so its share is not known)"
	}
	mine := srv
	if cliOK {
		mine += cli
	}
	switch {
	case mine < busy/2:
		who := "the server used " + cores(srv)
		if cliOK {
			who += " and shakedown " + cores(cli)
		}
		return "host CPU saturated by other processes, not the server: " + who + " " + of + "; the server's figures may suffer from them"
	case cliOK && cli > srv/10:
		return "host CPU saturated: the client and the server compete for it (server " + cores(srv) + ", shakedown " + cores(cli) + " " + of + ")"
	}
	return "host CPU saturated by the server: it used " + cores(srv) + " " + of
}
