package chat

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/internal/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/spf13/cobra"
)

// parse runs the command newCmd builds on args, as `chatq chat …` would,
// and returns the options its run would get; the run is not called.
func parse[T any](t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *T) error) *cobra.Command, args ...string) (*T, error) {
	t.Helper()
	f := &cmdutil.Factory{IO: &iostreams.IOStreams{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}}
	f.Load(&conn.Config{Prefix: "p:"}, nil)
	var got *T
	root := &cobra.Command{Use: "chatq", SilenceErrors: true, SilenceUsage: true}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageErr(err) })
	root.AddCommand(newCmd(f, func(_ context.Context, o *T) error { got = o; return nil }))
	root.SetArgs(args)
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

// isUsage reports whether err exits 2: a usage error, or cobra's own for
// a missing required flag (which Main maps to one).
func isUsage(err error) bool {
	return err != nil && (cmdutil.ExitCode(err, false) == cmdutil.ExitUsage || strings.HasPrefix(err.Error(), "required flag"))
}

// streams are fake standard streams, on a terminal or piped.
type streams struct {
	io       *iostreams.IOStreams
	out, err *bytes.Buffer
}

func newStreams(tty bool, stdin string) streams {
	s := streams{out: &bytes.Buffer{}, err: &bytes.Buffer{}}
	s.io = &iostreams.IOStreams{In: strings.NewReader(stdin), Out: s.out, ErrOut: s.err, OutTTY: tty, ErrTTY: tty, InTTY: tty}
	return s
}

// modes are the two ways output goes: to a terminal and piped.
var modes = []struct {
	name string
	tty  bool
}{{"terminal", true}, {"piped", false}}

// clientOn returns a chat client constructor on b, and a client to set up
// and check the chats with.
func clientOn(b redistest.Backend) (func() (*chat.Client, error), *chat.Client) {
	c := chat.New(b.Client, chat.Options{Prefix: b.Prefix})
	return func() (*chat.Client, error) { return c, nil }, c
}

// mustCreate creates chat 1 (or id) from from to to, with a first message.
func mustCreate(t *testing.T, c *chat.Client, id, from string, to []string, msg string) string {
	t.Helper()
	cr, err := c.Create(context.Background(), chat.CreateRequest{From: from, To: to, ID: id, Message: &msg})
	if err != nil {
		t.Fatal(err)
	}
	return cr.ChatID
}

// hintOf returns the hint err carries, or "".
func hintOf(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	return ""
}
