package cli

// topics are the help pages that are not a command's: shakedown help TOPIC.
var topics = map[string]string{
	"targets":   targetsHelp,
	"passwords": targetsHelp,
	"client-io": clientIOHelp,
}
