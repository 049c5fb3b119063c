package cmd

import (
	"context"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/spf13/cobra"
)

type configOptions struct {
	cmdutil.Output
	// Entries are the effective settings with their sources; Err is the
	// configuration's first problem, nil when none (conn.Config.Err).
	Entries []conn.ConfigEntry
	Err     error
	// Warned: the configuration has warnings (conn.Config.Warnings), shown
	// beside the settings they are about.
	Warned bool
}

// newCmdConfig returns `chatq config` (runF: see cmdutil.RunWith).
func newCmdConfig(f *cmdutil.Factory, runF func(context.Context, *configOptions) error) *cobra.Command {
	opts := &configOptions{}
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
		RunE: cmdutil.RunWith(f, opts, runF, func(_ context.Context, o *configOptions) error { return configRun(o) }, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Entries, opts.Err = f.Config().Describe(f.Flags(), f.Getenv), f.Config().Err
			opts.Warned = len(f.Config().Warnings) > 0
			return nil, nil
		}),
	})
}

func configRun(opts *configOptions) error {
	if opts.JSON {
		if err := opts.IO.WriteJSON(opts.Entries); err != nil {
			return err
		}
		return opts.Err
	}
	header := []string{"KEY", "VALUE", "SOURCE"}
	if opts.Err != nil {
		header = append(header, "ERROR")
	}
	if opts.Warned {
		header = append(header, "WARNING")
	}
	t := opts.IO.NewTable(header...)
	for _, e := range opts.Entries {
		row := []any{e.Key, e.Value, e.Source}
		if opts.Err != nil {
			row = append(row, e.Error)
		}
		if opts.Warned {
			row = append(row, e.Warning)
		}
		t.Row(row...)
	}
	if err := t.Flush(); err != nil {
		return err
	}
	return opts.Err
}
