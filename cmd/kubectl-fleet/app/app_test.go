package app

import (
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandHasExamples: each runnable command shows how it is used
// in its --help.
func TestEveryCommandHasExamples(t *testing.T) {
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && c.Example == "" {
			t.Errorf("%q has no Example", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewCommand())
}
