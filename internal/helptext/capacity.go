package helptext

// Capacity is the help of shakedown capacity.
const Capacity = `usage: shakedown capacity WORKLOAD --slo 'p99<=20ms' [--target [NAME=]URL]... [run options]

Finds the highest rate each target sustains within the SLO: a closed-loop
probe for the peak, then bisection on the offered rate (Poisson arrivals,
latency from each event's intended start, as run --rate) to a bracket, then
repeats of the answer. A step holds when the offered rate was achieved, the
backlog did not grow, each percentile's upper 95% bound is within the SLO,
errors are within theirs, and the client was not the limit. Every other
option is run's (shakedown help run); --rate, --time and --events are the
search's own. Exit 3 when a candidate's capacity is below the control's or
the SLO is not met at any rate tried.

`
