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

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

// Main runs chatq with the process's arguments and streams and returns the
// exit code. Nothing below it calls os.Exit.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	redis.SetLogger(conn.QuietLogger{})
	return Run(ctx, os.Args[1:], iostreams.SystemIO(), os.Getenv)
}

// Run executes one chatq command line and returns its exit code.
func Run(ctx context.Context, args []string, io *iostreams.IOStreams, getenv func(string) string) int {
	return runTree(ctx, args, io, getenv, newRootCmdFor)
}

// runTree is Run with the function that builds the command tree for args.
func runTree(ctx context.Context, args []string, io *iostreams.IOStreams, getenv func(string) string,
	tree func(f *cmdutil.Factory, args []string) *cobra.Command) int {
	f := &cmdutil.Factory{IO: io, Getenv: getenv}
	root := tree(f, args)
	strictCompletion(root)
	root.SetArgs(args)
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)

	c, err := root.ExecuteContextC(ctx)
	f.Close()
	if ferr := io.FilterErr(); ferr != nil && (err == nil || errors.Is(err, cmdutil.ErrNothing)) {
		// --jq or --template failed on output the command printed; a
		// stream went on filtering the values after it.
		err = ferr
	}
	if err != nil && isCobraUsage(err) {
		err = cmdutil.UsageErr(err)
	}
	err = cmdutil.MaybeApplied(c, err)
	exitStatus := f.Config() != nil && f.Config().ExitStatus
	code := cmdutil.ExitCode(err, exitStatus)
	switch {
	case err == nil || errors.Is(err, cmdutil.ErrNothing):
		return code
	case ctx.Err() != nil:
		io.Infof("interrupted")
		return cmdutil.ExitInterrupted
	}
	io.Infof("error: %s", err)
	if hint := f.HintFor(err); hint != "" {
		io.Infof("hint: %s", hint)
	}
	if code == cmdutil.ExitUsage && c != nil && !cmdutil.IsRefused(err) {
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

// Command returns chatq's command tree, for generating man pages and shell
// completions at release time.
func Command() *cobra.Command {
	return newRootCmd(&cmdutil.Factory{IO: iostreams.SystemIO(), Getenv: os.Getenv})
}
