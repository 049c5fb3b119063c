package cmd

import (
	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/spf13/cobra"
)

func newConfigCmd(f *cmdutil.Factory) *cobra.Command {
	return cmdutil.MarkRead(&cobra.Command{
		Use:   "config",
		Short: "Show the effective configuration and where each value comes from",
		Long: `Show the effective configuration: each setting, its value and its source
(flag, env, config file or default). The password is never shown, only
whether one is set.

With a bad config file or value, config still shows every setting, each
bad one with the value given and why it is refused (an "error" field with
-o json, an ERROR column in text), then exits 2 with the first problem; the
default stands in for a bad value meanwhile. version and completion work
with a bad configuration too.

A config file that holds a password (password, sentinel-password, or a
password in url) and that other users can read gets a warning on stderr
from every command, as libpq gives for a .pgpass; config also shows it
beside the settings it is about (a "warning" field, a WARNING column). The
fix: chmod 600 FILE.`,
		Example: "  chatq config\n  CHATQ_PREFIX=staging: chatq config -o json",
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			entries := f.Config().Describe(f.Flags(), f.Getenv)
			if f.JSON() {
				if err := f.IO.WriteJSON(entries); err != nil {
					return err
				}
				return f.Config().Err
			}
			header := []string{"KEY", "VALUE", "SOURCE"}
			if f.Config().Err != nil {
				header = append(header, "ERROR")
			}
			warned := len(f.Config().Warnings) > 0
			if warned {
				header = append(header, "WARNING")
			}
			t := f.IO.NewTable(header...)
			for _, e := range entries {
				row := []any{e.Key, e.Value, e.Source}
				if f.Config().Err != nil {
					row = append(row, e.Error)
				}
				if warned {
					row = append(row, e.Warning)
				}
				t.Row(row...)
			}
			if err := t.Flush(); err != nil {
				return err
			}
			return f.Config().Err
		},
	})
}
