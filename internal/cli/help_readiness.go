package cli

// readinessHelp is the help of shakedown readiness.
const readinessHelp = `usage: shakedown readiness SOURCE TARGET [--store FILE] [--sweep ID] [--format text|md|json|html] [-o FILE] [--html FILE]

One page that says whether TARGET is ready to take over from SOURCE, from
what the store holds about the pair: the latest check (its findings and the
variables diff), the latest sweep with TARGET as a candidate (its verdicts
against the control), the latest replay, the latest verify and the latest
capacity search with SOURCE as its control (its headroom over the
production peak; below the peak or the source's capacity is "not ready"),
and from a rehearsal that followed (rehearse with follow: and cutover:)
its follower's work (rows applied, its lag under the sweep's load and
overall; a lag p99 above 2 s warns, a follower that failed is "not
ready"), what verify found beside it, and the rehearsed cutover (its
write-unavailable window and each step's time; data that did not match
is "not ready").
The verdict is "ready", "ready with warnings" or "not ready", with the
reasons in order and, for each missing piece of evidence, the command that
produces it (check, verify, replay and capacity save theirs with --store
FILE; the commands the page suggests name the store it read).

readiness reads the store only: it connects to neither server, so the page
can be rebuilt at any time. SOURCE and TARGET are the URLs given to check
and verify; evidence is matched by host and port.

Exit status: 0 ready or ready with warnings, 3 not ready, 1 failure, 2 bad
usage.

Options:
`
