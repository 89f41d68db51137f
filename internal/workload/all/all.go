// Package all wires every workload into the registry; import it for its
// side effects.
package all

import (
	_ "github.com/shakedown/shakedown/internal/workload/oltp"
)
