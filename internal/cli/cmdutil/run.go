package cmdutil

import (
	"context"

	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/spf13/cobra"
)

// Run is a command's work once its options are read and checked.
type Run func(context.Context) error

// Output is the output side every command's options share: the streams,
// and whether -o json (or --jq, --template) was asked for. A command
// embeds it in its options and RunWith fills it from the Factory, so no
// command copies f.IO and f.JSON() itself.
type Output struct {
	IO   *iostreams.IOStreams
	JSON bool
}

// output is how RunWith finds the Output an options struct embeds.
func (o *Output) output() *Output { return o }

// Output returns the output side as the flags and configuration set it;
// it is known only once they are parsed.
func (f *Factory) Output() Output { return Output{IO: f.IO, JSON: f.JSON()} }

// RunWith is the RunE of a command whose options are O, in the order every
// command reads (kubectl's Complete, Validate, Run): it fills the Output
// that O embeds from f, then bind reads the arguments and flags into opts
// and checks them without I/O; then run does the work, or runF, when a
// test gives one, gets the options instead (parsed and validated, nothing
// run). bind returns a Run of its own for an argument another path handles
// (a queue of another kind), else nil; that Run runs even when runF is set.
func RunWith[O any](f *Factory, opts *O, runF, run func(context.Context, *O) error, bind func(cmd *cobra.Command, args []string) (Run, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if o, ok := any(opts).(interface{ output() *Output }); ok {
			*o.output() = f.Output()
		}
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
