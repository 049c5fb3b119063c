package cmd

import "github.com/spf13/cobra"

func newListCmd(f *Factory) *cobra.Command {
	cmd := newGroupCmd("list", "Sharded list of \"Redis in Action\" §11.4", "")
	return cmd
}
