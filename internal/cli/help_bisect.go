package cli

// bisectHelp is the help of shakedown vars bisect.
const bisectHelp = `usage: shakedown vars bisect CONTROL CANDIDATE --workload W --threads N --allow-set-global
                          [run options] [--repeats 4] [--budget 10m] [--json FILE] [--html FILE] [--undo FILE]
       shakedown vars bisect --undo FILE [CONTROL]

Finds which of the global variables that differ between CONTROL and
CANDIDATE make their performance differ. It measures the workload on both
sides (--repeats runs each, interleaved); if they do not differ clearly it
says so and stops. Otherwise it applies the candidate's values on the
control, a group at a time, and measures again, each run with the group
applied paired with a run of the control as it is made right next to it
(so that a machine getting busier or quieter moves both alike; a round
makes at least 6 pairs, the fewest an exact 95% interval needs). A group
that does not move the control is cleared, one that does is split in two, down to single
variables (about 2 x log2(differences) rounds when one variable is the
cause). Variables that matter only together are reported as an
interaction. The differing variables are those of "vars diff" (per-instance
ones left out). Variables the control cannot change at runtime are applied
by restarting it when it is a local sandbox (see shakedown sandbox), else
listed as not testable.

It changes the control, so it runs only with --allow-set-global (without it,
it lists what it would change and exits 2). It writes the undo file before
the first change, restores every variable at the end, on error and on
Ctrl-C, and reads them back to verify; it stops if another session changes
the control's variables meanwhile. After a crash, "vars bisect --undo FILE"
restores the control (its password is found as for any target, see
shakedown help targets). The user needs SUPER or SYSTEM_VARIABLES_ADMIN on
the control.

Run options are those of "shakedown run WORKLOAD" (--time, --tables,
--table-size, --warmup-time, ...); the workload's data must be prepared on
both sides. Exits 0 when done, 1 when it failed or was interrupted (the
control restored), 2 on bad input.

Options:
`
