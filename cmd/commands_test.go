package cmd

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/spf13/cobra"
)

// parse runs args on the root with only the command newCmd builds, as chatq
// would (global flags, configuration from env), and returns the options its
// run would get; the run is not called. env is the environment the command
// sees; no config file is read unless it names one.
func parse[T any](t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *T) error) *cobra.Command,
	env map[string]string, args ...string) (*T, error) {
	t.Helper()
	home := t.TempDir()
	io, _, _ := iostreams.Test(false, "")
	f := &cmdutil.Factory{IO: io, Getenv: func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return home
		}
		return env[k]
	}}
	var got *T
	root := newRootOnly(f)
	root.AddCommand(newCmd(f, func(_ context.Context, o *T) error { got = o; return nil }))
	root.SetArgs(args)
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	if err := root.Execute(); err != nil {
		return nil, err
	}
	if got == nil {
		t.Fatalf("%q: the run function was not called", args)
	}
	return got, nil
}

// isUsage reports whether err exits 2, as Run maps it.
func isUsage(err error) bool {
	return err != nil && (isCobraUsage(err) || cmdutil.ExitCode(err, false) == cmdutil.ExitUsage)
}

// modes are the two ways output goes: to a terminal and piped.
var modes = []struct {
	name string
	tty  bool
}{{"terminal", true}, {"piped", false}}

// hintOf returns the hint err carries, or "".
func hintOf(err error) string {
	var h *cmdutil.HintError
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}
