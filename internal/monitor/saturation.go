package monitor

// hostSaturated says why the host's CPU is saturated, from the share of it
// the server's process and shakedown's own took: host CPU is everything on
// the host, and a saturation caused by another process (a backup, a build,
// another benchmark) must not be put on the server. The shares themselves
// are in the srv% and cli% columns; the reason stays the same from second
// to second, so that watch says it once.
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
	if !srvOK {
		if cliOK && busy > 0 && cli >= busy/2 {
			return "host CPU saturated by shakedown itself (cli%; the server's process is not on this host or was not found)"
		}
		return "host CPU saturated (the server's process is not on this host or was not found, so its share is not known)"
	}
	mine := srv
	if cliOK {
		mine += cli
	}
	switch {
	case busy > 0 && mine < busy/2:
		return "host CPU saturated by other processes, not the server (its share is in srv%): the server's figures may suffer from them"
	case cliOK && cli > srv/10:
		return "host CPU saturated: the client and the server compete for it (srv%, cli%)"
	}
	return "host CPU saturated by the server (srv%)"
}
