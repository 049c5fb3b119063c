package cmd

import (
	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/spf13/cobra"
)

func newConfigCmd(f *cmdutil.Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "config",
		Short: "Show the effective configuration and where each value comes from",
		Long: `Show the effective configuration: each setting, its value and its source
(flag, env, config file or default). The password is never shown, only
whether one is set.`,
		Example: "  chatq config\n  CHATQ_PREFIX=staging: chatq config -o json",
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			entries := f.Config().Describe(f.Flags(), f.Getenv)
			if f.JSON() {
				return f.WriteJSON(entries)
			}
			t := f.NewTable("KEY", "VALUE", "SOURCE")
			for _, e := range entries {
				t.Row(e.Key, e.Value, e.Source)
			}
			return t.Flush()
		},
	}
}
