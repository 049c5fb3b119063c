package cmdutil

import "github.com/spf13/cobra"

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

var NoArgs = usageArgs(cobra.NoArgs)

// NewGroupCmd makes a command that only holds subcommands: run bare it shows
// its help; run with an unknown subcommand it is a usage error.
func NewGroupCmd(use, short, long string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return UsageErrorf("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
}
