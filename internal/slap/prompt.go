package slap

import "io"

// Prompt reads the password from stdin when -p was given without one, as
// mysqlslap asks for it; otherwise it does nothing.
func (o *Options) Prompt(stdin io.Reader) error {
	if !o.PasswordPrompt || o.Changed("password") {
		return nil
	}
	pw, err := ReadPassword(stdin)
	if err != nil {
		return err
	}
	return o.Flags().Set("password", pw)
}
