package cmd

import (
	"os"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/spf13/cobra"
)

// Every command a user can run has a one-line summary and examples.
func TestEveryCommandHasHelpAndExamples(t *testing.T) {
	root := newRootCmd(&cmdutil.Factory{IO: &iostreams.IOStreams{}, Getenv: os.Getenv})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Short == "" {
			t.Errorf("%s: no one-line summary", c.CommandPath())
		}
		if c.Runnable() && c.Example == "" && c.HasParent() {
			t.Errorf("%s: no examples", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
