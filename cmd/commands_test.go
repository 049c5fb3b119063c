package cmd

import (
	"context"
	"os"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/cmdtest"
	"github.com/spf13/cobra"
)

// parse runs args on the root with only the command newCmd builds, as chatq
// would (global flags, configuration), and returns the options its run
// would get; the run is not called. env is the environment while it
// parses, the process's too (viper reads that); no config file is read
// unless the arguments name one.
func parse[T any](t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *T) error) *cobra.Command,
	env map[string]string, args ...string) (*T, error) {
	t.Helper()
	for k, v := range env {
		old, had := os.LookupEnv(k)
		os.Setenv(k, v)
		if had {
			defer os.Setenv(k, old)
		} else {
			defer os.Unsetenv(k)
		}
	}
	home := t.TempDir()
	io, _, _ := iostreams.Test(false, "")
	f := &cmdutil.Factory{IO: io, Getenv: func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return home
		}
		return env[k]
	}}
	return cmdtest.Parse(t, newRootOnly(f), f, newCmd, args...)
}

// isUsage is cmdtest.IsUsage: whether err exits 2, as Run maps it
// (TestCobraUsage checks the two agree).
func isUsage(err error) bool { return cmdtest.IsUsage(err) }

// modes are the two ways output goes: to a terminal and piped.
var modes = []struct {
	name string
	tty  bool
}{{"terminal", true}, {"piped", false}}

// hintOf is cmdtest.Hint: the hint err carries, or "".
func hintOf(err error) string { return cmdtest.Hint(err) }

// cmdtest.IsUsage knows the plain errors cobra makes itself as Main does
// (isCobraUsage): it keeps its own list of them, as it cannot import cmd.
func TestCobraUsage(t *testing.T) {
	run := func(args ...string) error {
		root := &cobra.Command{Use: "chatq", SilenceErrors: true, SilenceUsage: true}
		leaf := &cobra.Command{Use: "leaf", RunE: func(*cobra.Command, []string) error { return nil }}
		for _, n := range []string{"req", "a", "b", "c", "d", "e", "g"} {
			leaf.Flags().String(n, "", "")
		}
		_ = leaf.MarkFlagRequired("req")
		leaf.MarkFlagsRequiredTogether("a", "b")
		leaf.MarkFlagsOneRequired("c", "d")
		leaf.MarkFlagsMutuallyExclusive("e", "g")
		root.AddCommand(leaf)
		root.SetArgs(args)
		return root.Execute()
	}
	for _, args := range [][]string{
		{"nope"},
		{"leaf", "--c", "1"},
		{"leaf", "--req", "1", "--c", "1", "--a", "1"},
		{"leaf", "--req", "1"},
		{"leaf", "--req", "1", "--c", "1", "--e", "1", "--g", "1"},
	} {
		err := run(args...)
		if err == nil || !isCobraUsage(err) || !cmdtest.IsUsage(err) {
			t.Errorf("%q: %v: Main's isCobraUsage %v, cmdtest.IsUsage %v", args, err, err != nil && isCobraUsage(err), cmdtest.IsUsage(err))
		}
	}
}
