package cli

// cutoverHelp is the help of shakedown cutover.
const cutoverHelp = `usage: shakedown cutover SOURCE TARGET --allow-set-global [options]

Rehearses the switch from SOURCE to TARGET, step by step, timed:
  1. waits for the follower's lag to fall under --max-lag (a follower at work
     on TARGET, or one this command runs from the saved position);
  2. SET GLOBAL read_only = ON on SOURCE (--kill-writers also ends the
     sessions with an open transaction that has written);
  3. waits for the follower to apply SOURCE's final position;
  4. verifies the followed databases (--verify full|none);
  5. with --rehearse (the default) sets read_only back as it was, also on
     Ctrl-C; --keep-read-only or --rehearse=false leave SOURCE read-only.
It prints the timeline and the write-unavailable window: from read_only on
to the verify's end. cutover never changes DNS, a proxy or a load balancer.

Exit status: 0 the data matched, 3 it did not or SOURCE was written after
read_only = ON, 1 a step failed, 2 bad usage.

Options:
`
