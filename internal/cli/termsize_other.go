//go:build !unix

package cli

// terminalColumns is 0 (unknown) where the terminal's size is not asked.
func terminalColumns(uintptr) int { return 0 }
