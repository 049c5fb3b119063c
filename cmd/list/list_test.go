package list

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

// parse runs the command newCmd builds on args, as `chatq list …` would
// (with the group's --shard-size), and returns the options its run would
// get; the run is not called.
func parse[T any](t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *T) error) *cobra.Command, args ...string) (*T, error) {
	t.Helper()
	f := &cmdutil.Factory{IO: &iostreams.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
	f.Load(&conn.Config{Prefix: "p:", Output: "json"}, nil)
	var got *T
	root := &cobra.Command{Use: "chatq", SilenceErrors: true, SilenceUsage: true}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageErr(err) })
	group := &cobra.Command{Use: "list"}
	addShardSizeFlag(group)
	group.AddCommand(newCmd(f, func(_ context.Context, o *T) error { got = o; return nil }))
	root.AddCommand(group)
	root.SetArgs(append([]string{"list"}, args...))
	root.SetOut(&bytes.Buffer{})
	root.SetErr(&bytes.Buffer{})
	if err := root.Execute(); err != nil {
		return nil, err
	}
	if got == nil {
		t.Fatalf("%v: the run function was not called", args)
	}
	return got, nil
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

// isUsage reports whether err exits 2.
func isUsage(err error) bool {
	return err != nil && cmdutil.ExitCode(err, false) == cmdutil.ExitUsage
}

// streams are fake standard streams, on a terminal or piped.
type streams struct {
	io       *iostreams.IOStreams
	out, err *bytes.Buffer
}

func newStreams(tty bool, stdin string) streams {
	s := streams{out: &bytes.Buffer{}, err: &bytes.Buffer{}}
	s.io = &iostreams.IOStreams{In: strings.NewReader(stdin), Out: s.out, ErrOut: s.err, OutTTY: tty, ErrTTY: tty}
	return s
}

// modes are the two ways output goes: to a terminal and piped.
var modes = []struct {
	name string
	tty  bool
}{{"terminal", true}, {"piped", false}}

// on returns the options every command has, on b with streams s.
func on(b redistest.Backend, s streams) listOptions {
	return listOptions{IO: s.io, Prefix: b.Prefix, Redis: func() (redis.UniversalClient, error) { return b.Client, nil }}
}
