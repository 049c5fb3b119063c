package cmdutil

import (
	"context"

	"github.com/spf13/cobra"
)

// Run is a command's work once its options are read and checked.
type Run func(context.Context) error

// RunE is the RunE of a command whose options are O, in the order every
// command reads (kubectl's Complete, Validate, Run): bind reads the
// arguments and flags into opts and checks them without I/O; then run does
// the work, or runF, when a test gives one, gets the options instead
// (parsed and validated, nothing run). bind returns a Run of its own for
// an argument another path handles (a queue of another kind), else nil.
func RunE[O any](opts *O, runF, run func(context.Context, *O) error, bind func(cmd *cobra.Command, args []string) (Run, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		other, err := bind(cmd, args)
		switch {
		case err != nil:
			return err
		case other != nil:
			return other(cmd.Context())
		case runF != nil:
			return runF(cmd.Context(), opts)
		}
		return run(cmd.Context(), opts)
	}
}
