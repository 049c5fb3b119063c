package cmdutil

import (
	"strings"

	"github.com/spf13/cobra"
)

// usageArgs wraps a cobra argument validator so that its errors exit 2.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return UsageErr(err)
		}
		return nil
	}
}

// ExactArgs, MinArgs, RangeArgs and NoArgs are cobra's validators as usage errors.
func ExactArgs(n int) cobra.PositionalArgs    { return usageArgs(cobra.ExactArgs(n)) }
func MinArgs(n int) cobra.PositionalArgs      { return usageArgs(cobra.MinimumNArgs(n)) }
func RangeArgs(a, b int) cobra.PositionalArgs { return usageArgs(cobra.RangeArgs(a, b)) }

// NoArgs refuses arguments. On a command with subcommands (the root) an
// argument is an unknown command, with the nearest names as a hint.
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && cmd.HasAvailableSubCommands() {
		return unknownCommand(cmd, args[0])
	}
	return usageArgs(cobra.NoArgs)(cmd, args)
}

// unknownCommand is a usage error for a command name cmd does not have,
// with a "did you mean" hint when one of its commands is a likely
// misspelling (cobra's suggestions: two edits or a prefix).
func unknownCommand(cmd *cobra.Command, name string) error {
	err := UsageErrorf("unknown command %q for %q", name, cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's default, which SuggestionsFor does not apply
	}
	if s := cmd.SuggestionsFor(name); len(s) > 0 {
		for i := range s {
			s[i] = "`" + cmd.CommandPath() + " " + s[i] + "`"
		}
		return WithHint(err, "did you mean "+strings.Join(s, " or ")+"?")
	}
	return err
}

// NewGroupCmd makes a command that only holds subcommands: run bare it shows
// its help; run with an unknown subcommand it is a usage error.
func NewGroupCmd(use, short, long string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
}
