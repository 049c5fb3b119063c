package cmd

import "github.com/spf13/cobra"

func newQueueCmd(f *Factory) *cobra.Command {
	cmd := newGroupCmd("queue", "Delayed queue with visibility timeouts, stored in RSMQ's layout", "")
	return cmd
}
