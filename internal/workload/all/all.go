// Package all wires every workload into the registry; import it for its
// side effects.
package all

import (
	_ "github.com/shakedown/shakedown/internal/workload/connect"
	_ "github.com/shakedown/shakedown/internal/workload/hotrow"
	_ "github.com/shakedown/shakedown/internal/workload/oltp"
	_ "github.com/shakedown/shakedown/internal/workload/ping"
	_ "github.com/shakedown/shakedown/internal/workload/sqlfile"
)
