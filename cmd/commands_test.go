package cmd

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/chatq-dev/chatq/internal/cmdtest"
	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/iostreams"
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
