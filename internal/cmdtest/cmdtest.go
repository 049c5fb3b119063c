// Package cmdtest helps test a command group beside its files: it runs a
// command's flags into its options through the constructor's runF, without
// the rest of the tree.
package cmdtest

import (
	"bytes"
	"context"
	"testing"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/spf13/cobra"
)

// Factory returns a factory with piped test streams (iostreams.Test),
// cfg as the loaded configuration (the global flags, parsed) and env as
// the environment.
func Factory(cfg *conn.Config, env map[string]string) *cmdutil.Factory {
	io, _, _ := iostreams.Test(false, "")
	f := &cmdutil.Factory{IO: io, Getenv: func(k string) string { return env[k] }}
	f.Load(cfg, nil)
	return f
}

// Root returns a root command as chatq's for Parse: it maps flag errors
// to usage errors, and has one global flag, --url (demo reads whether it
// is given); the other global flags stand in the factory's configuration.
func Root() *cobra.Command {
	root := &cobra.Command{Use: "chatq", SilenceErrors: true, SilenceUsage: true}
	root.PersistentFlags().String("url", conn.DefaultURL, "")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageErr(err) })
	return root
}

// Parse runs args on root with the command newCmd builds for f added, and
// returns the options the run would get; the run is not called.
func Parse[T any](t testing.TB, root *cobra.Command, f *cmdutil.Factory, newCmd func(*cmdutil.Factory, func(context.Context, *T) error) *cobra.Command, args ...string) (*T, error) {
	t.Helper()
	var got *T
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

// IsUsage reports whether err is a usage error (exit 2).
func IsUsage(err error) bool {
	return err != nil && cmdutil.ExitCode(err, false) == cmdutil.ExitUsage
}
