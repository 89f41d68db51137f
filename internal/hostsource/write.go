package hostsource

import (
	"io"

	"github.com/shakedown/shakedown/internal/host"
)

// Write prints the facts as host facts does: as text on w, or with
// --json as JSON, on w for "-" or to the file jsonPath beside the text.
func Write(w io.Writer, jsonPath string, f *host.Facts) error {
	switch jsonPath {
	case "":
	case "-":
		return host.WriteJSON(w, f)
	default:
		if err := WriteFile(jsonPath, f); err != nil {
			return err
		}
	}
	return host.WriteText(w, f)
}
