package cli

// capacityHelp is the help of shakedown capacity.
const capacityHelp = `usage: shakedown capacity WORKLOAD --slo 'p99<=20ms' [--target [NAME=]URL]... [run options]

Finds the highest rate each target sustains within the SLO: a closed-loop
probe for the peak, then bisection on the offered rate (Poisson arrivals,
latency from each event's intended start, as run --rate) to a bracket, then
repeats of the answer. A step holds when the offered rate was achieved, the
backlog did not grow, each percentile's upper 95% bound is within the SLO,
errors are within theirs, and the client was not the limit. The error
limit is errors<=PERCENT in --slo, 0.1% of a step's events without it (a
deadlock or lock wait timeout the run retried counts as an error; one in
thousands says nothing of the capacity; errors<=0% allows none): the
search states it before its first step. Steps at one rate that disagree,
with the percentile ranging over four times its lowest, make the search
inconclusive (the host's noise, not a capacity; exit 1). Every other
option is run's (shakedown help run); --rate, --time and --events are the
search's own. Exit 3 when a candidate's capacity is below the control's or
the SLO is not met at any rate tried.

--peak gives the production peak, for the headroom (capacity over peak): a
number of events a second (1200, 1200/s), or a file that "shakedown watch
URL --json" wrote on production, whose highest figure that counts one
event is used: tps where an event is a transaction (oltp_read_write), qps
where it is one statement (oltp_point_select, a captured sql workload). A
workload whose event is neither needs a number.

`
