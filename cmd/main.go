// Package cmd is chatq's command line: it parses flags, validates input,
// calls pkg/chat, pkg/delayq and pkg/shardlist, and prints results. Exit
// codes are decided in one place, Main.
package cmd

import (
	"context"
	"errors"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

// Main runs chatq with the process's arguments and streams and returns the
// exit code. Nothing below it calls os.Exit.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	redis.SetLogger(quietLogger{})
	return Run(ctx, os.Args[1:], systemIO(), os.Getenv)
}

// Run executes one chatq command line and returns its exit code.
func Run(ctx context.Context, args []string, io *IOStreams, getenv func(string) string) int {
	f := &Factory{IO: io, Getenv: getenv}
	root := newRootCmd(f)
	root.SetArgs(args)
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)

	c, err := root.ExecuteContextC(ctx)
	f.close()
	if err != nil && isCobraUsage(err) {
		err = &usageError{err}
	}
	exitStatus := f.cfg != nil && f.cfg.ExitStatus
	code := exitCode(err, exitStatus)
	switch {
	case err == nil || errors.Is(err, ErrNothing):
		return code
	case ctx.Err() != nil:
		io.Infof("interrupted")
		return exitInterrupted
	}
	io.Infof("error: %s", err)
	if hint := hintFor(err); hint != "" {
		io.Infof("hint: %s", hint)
	}
	if code == exitUsage && c != nil {
		io.Infof("usage: %s", c.UseLine())
		io.Infof("run '%s --help' for flags and examples", c.CommandPath())
	}
	return code
}

// isCobraUsage recognises the usage errors cobra makes itself, which are
// plain errors: unknown commands and missing required flags.
func isCobraUsage(err error) bool {
	msg := err.Error()
	for _, p := range []string{"unknown command", "required flag", "if any flags in the group", "at least one of the flags", "none of the others can be"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// usageArgs wraps a cobra argument validator so that its errors exit 2.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return &usageError{err}
		}
		return nil
	}
}

// exactArgs, minArgs, rangeArgs and noArgs are cobra's validators as usage errors.
func exactArgs(n int) cobra.PositionalArgs    { return usageArgs(cobra.ExactArgs(n)) }
func minArgs(n int) cobra.PositionalArgs      { return usageArgs(cobra.MinimumNArgs(n)) }
func rangeArgs(a, b int) cobra.PositionalArgs { return usageArgs(cobra.RangeArgs(a, b)) }

var noArgs = usageArgs(cobra.NoArgs)

// newGroupCmd makes a command that only holds subcommands: run bare it shows
// its help; run with an unknown subcommand it is a usage error.
func newGroupCmd(use, short, long string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Long:  long,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageErrorf("unknown command %q for %q", args[0], cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
}

// Command returns chatq's command tree, for generating man pages and shell
// completions at release time.
func Command() *cobra.Command {
	return newRootCmd(&Factory{IO: systemIO(), Getenv: os.Getenv})
}
