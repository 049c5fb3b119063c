package cmd

import "github.com/spf13/cobra"

func newChatCmd(f *Factory) *cobra.Command {
	cmd := newGroupCmd("chat", "Group chat inboxes that work while recipients are offline", "")
	return cmd
}
