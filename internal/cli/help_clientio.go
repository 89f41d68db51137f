package cli

// clientIOHelp is shakedown help client-io.
const clientIOHelp = `Client I/O: how the client waits for the server (--client-io)

run, slap and replay take --client-io:
  loop      every connection is a task of one of a few I/O loops, each
            waiting on epoll for all of its connections: the least CPU per
            query. The loops keep their processors while they wait.
  blocking  a goroutine a connection, a blocking system call per read: for a
            few connections per core.
  polled    a goroutine a connection, through Go's poller.
  auto      (the default) chooses by where the server runs:
            - I/O loops, one per core the client may use, that keep their
              processors while they wait (on a client of one core, only a
              single thread's loop does);
            - where the server shares the client's cores, up to 16 threads
              per core get a loop for every four threads (a workload that
              only reads, a loop a thread up to 8 per core), and where there
              is a loop for every core each is bound to one in turn;
            - against a server in shakedown's own process the loops hand
              their cores back, and where it shares the client's cores up
              to 8 threads per core read blocking instead.
            A replay has a loop a core, each session counting as a thread
            per target.
What was chosen is the Client I/O line of run's header, slap's summary and
replay's report, and "client"."io" in the result document.

Tuning, for a benchmark that measures a rule against what it replaces (run,
slap and replay take it; a sweep, capacity and bisect keep the rules): each
variable set in the environment replaces a rule of the loops, is recorded
with the result ("tuning", and "tuned: ..." on the Client I/O line) and
leaves the rule when unset or given a value it does not take.
  SHAKEDOWN_IOLOOP_LOOPS=N       N loops, no more than the threads, in place
                                 of the count's rule (a replay keeps a loop
                                 a core)
  SHAKEDOWN_IOLOOP_BIND=on|off   held loops with a loop for every core bound
                                 to cores or not, in place of the rule (on
                                 binds on cores of the client's own too)
  SHAKEDOWN_IOLOOP_WATCH=on|off  held loops watched (waiting with no timeout)
                                 or not, in place of the rule
  SHAKEDOWN_IOLOOP_BURST=N       N ready connections taken at each wait, in
                                 place of 256
  SHAKEDOWN_IOLOOP_HOLD=off      held loops give their processor away at
                                 every wait all the same: holding's baseline

docs/run.md explains the choice; docs/PERFORMANCE.md has the figures each
rule stands on.
`
