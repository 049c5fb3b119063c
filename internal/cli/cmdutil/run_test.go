package cmdutil

import (
	"context"
	"errors"
	"testing"

	"github.com/spf13/cobra"
)

// RunE binds first; a bind error stops it, a Run of bind's own replaces
// the command's run, and a test's runF gets the options instead of run.
func TestRunE(t *testing.T) {
	type options struct{ name string }
	bad := errors.New("bad")
	for _, tc := range []struct {
		name    string
		bindErr error
		other   bool
		runF    bool
		want    string
	}{
		{"run", nil, false, false, "run x"},
		{"a test's runF", nil, false, true, "runF x"},
		{"bind's own run", nil, true, true, "other"},
		{"bad input", bad, true, true, ""},
	} {
		var got string
		opts := &options{}
		var runF func(context.Context, *options) error
		if tc.runF {
			runF = func(_ context.Context, o *options) error { got = "runF " + o.name; return nil }
		}
		run := func(_ context.Context, o *options) error { got = "run " + o.name; return nil }
		rune := RunE(opts, runF, run, func(_ *cobra.Command, args []string) (Run, error) {
			opts.name = args[0]
			if tc.other {
				return func(context.Context) error { got = "other"; return nil }, tc.bindErr
			}
			return nil, tc.bindErr
		})
		err := rune(&cobra.Command{}, []string{"x"})
		if !errors.Is(err, tc.bindErr) || got != tc.want {
			t.Errorf("%s: ran %q, %v; want %q, %v", tc.name, got, err, tc.want, tc.bindErr)
		}
	}
}
