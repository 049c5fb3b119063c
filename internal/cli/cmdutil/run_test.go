package cmdutil

import (
	"context"
	"errors"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/spf13/cobra"
)

// RunWith binds first; a bind error stops it, a Run of bind's own
// replaces the command's run, and a test's runF gets the options instead
// of run.
func TestRunWith(t *testing.T) {
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
		runE := RunWith(&Factory{}, opts, runF, run, func(_ *cobra.Command, args []string) (Run, error) {
			opts.name = args[0]
			if tc.other {
				return func(context.Context) error { got = "other"; return nil }, tc.bindErr
			}
			return nil, tc.bindErr
		})
		err := runE(&cobra.Command{}, []string{"x"})
		if !errors.Is(err, tc.bindErr) || got != tc.want {
			t.Errorf("%s: ran %q, %v; want %q, %v", tc.name, got, err, tc.want, tc.bindErr)
		}
	}
}

// RunWith fills the Output the options embed from the Factory before bind
// reads them, so bind and run see the streams and -o json.
func TestRunWithOutput(t *testing.T) {
	type options struct {
		Output
		name string
	}
	for _, output := range []string{"text", "json"} {
		f := &Factory{IO: &iostreams.IOStreams{}}
		if err := f.Load(&conn.Config{Output: output}, nil); err != nil {
			t.Fatal(err)
		}
		opts := &options{}
		var inBind Output
		var got *options
		rune := RunWith(f, opts, func(_ context.Context, o *options) error { got = o; return nil }, nil,
			func(_ *cobra.Command, args []string) (Run, error) {
				inBind, opts.name = opts.Output, args[0]
				return nil, nil
			})
		if err := rune(&cobra.Command{}, []string{"x"}); err != nil {
			t.Fatal(err)
		}
		want := Output{IO: f.IO, JSON: output == "json"}
		if inBind != want || got != opts || got.Output != want || got.name != "x" {
			t.Errorf("-o %s: bind saw %+v, runF got %+v; want %+v", output, inBind, got, want)
		}
	}
}
