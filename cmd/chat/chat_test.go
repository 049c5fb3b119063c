package chat

import (
	"bytes"
	"context"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/cmdtest"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/spf13/cobra"
)

// parse runs the command newCmd builds on args, as `chatq chat …` would,
// and returns the options its run would get (cmdtest.Parse).
func parse[T any](t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *T) error) *cobra.Command, args ...string) (*T, error) {
	t.Helper()
	return cmdtest.Parse(t, cmdtest.Root(), cmdtest.Factory(&conn.Config{Prefix: "p:"}, nil), newCmd, args...)
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
func hintOf(err error) string { return cmdtest.Hint(err) }
