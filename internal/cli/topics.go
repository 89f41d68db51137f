package cli

import "github.com/shakedown/shakedown/internal/helptext"

// topics are the help pages that are not a command's: shakedown help TOPIC.
var topics = map[string]string{
	"targets":   helptext.Targets,
	"passwords": helptext.Targets,
	"client-io": helptext.ClientIO,
}
