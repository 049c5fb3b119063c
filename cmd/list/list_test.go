package list

import (
	"bytes"
	"context"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/cmdtest"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

// parse runs the command newCmd builds on args, as `chatq list …` would
// (with the group's --shard-size), and returns the options its run would
// get (cmdtest.Parse).
func parse[T any](t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *T) error) *cobra.Command, args ...string) (*T, error) {
	t.Helper()
	group := &cobra.Command{Use: "list"}
	addShardSizeFlag(group)
	cmdtest.Root().AddCommand(group)
	return cmdtest.Parse(t, group, cmdtest.Factory(&conn.Config{Prefix: "p:", Output: "json"}, nil), newCmd, args...)
}

// sided adapts a constructor of a head and a tail command to parse.
func sided[T any](newCmd func(*cmdutil.Factory, side, func(context.Context, *T) error) *cobra.Command, s side) func(*cmdutil.Factory, func(context.Context, *T) error) *cobra.Command {
	return func(f *cmdutil.Factory, runF func(context.Context, *T) error) *cobra.Command {
		return newCmd(f, s, runF)
	}
}

// checkShared checks what every command's options get from the factory
// parse builds, and clears it for comparing the rest.
func checkShared(t *testing.T, args []string, o *listOptions) {
	t.Helper()
	if o.IO == nil || o.Redis == nil || !o.JSON || o.Prefix != "p:" {
		t.Errorf("%q: shared options %+v", args, o)
	}
	o.IO, o.Redis, o.JSON, o.Prefix = nil, nil, false, ""
}

// isUsage is cmdtest.IsUsage: whether err exits 2.
func isUsage(err error) bool { return cmdtest.IsUsage(err) }

// streams are fake standard streams (iostreams.Test), on a terminal or piped.
type streams struct {
	io       *iostreams.IOStreams
	out, err *bytes.Buffer
}

func newStreams(tty bool, stdin string) (s streams) {
	s.io, s.out, s.err = iostreams.Test(tty, stdin)
	return s
}

// modes are the two ways output goes: to a terminal and piped.
var modes = []struct {
	name string
	tty  bool
}{{"terminal", true}, {"piped", false}}

// on returns the options every command has, on b with streams s.
func on(b redistest.Backend, s streams) listOptions {
	return listOptions{Output: cmdutil.Output{IO: s.io}, Prefix: b.Prefix, Redis: func() (redis.UniversalClient, error) { return b.Client, nil }}
}
