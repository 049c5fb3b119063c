package queue

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/clierr"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/cli/queuekinds"
	"github.com/chatq-dev/chatq/internal/testkit/cmdtest"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/spf13/cobra"
)

// parse runs the command newCmd makes on args (after the command's name),
// under a group with --namespace as NewCmd gives it, and returns the
// options the run would get (cmdtest.Parse). Leading "-o json" args stand
// for the global flag.
func parse[O any](t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	output := "text"
	if len(args) >= 2 && args[0] == "-o" {
		output, args = args[1], args[2:]
	}
	f := cmdtest.Factory(&conn.Config{Output: output}, nil)
	group := &cobra.Command{Use: "queue"}
	group.PersistentFlags().String("namespace", "", "")
	cmdtest.Root().AddCommand(group)
	return cmdtest.Parse(t, group, f, newCmd, append([]string{newCmd(f, nil).Name()}, args...)...)
}

// flagCase is a row of a flags → options table: the arguments, and the
// options runF gets or the usage error they make (cmdtest.FlagCase, with
// the field names the tables here use).
type flagCase[O any] struct {
	args    []string
	want    O
	wantErr string
}

// checkFlags runs each case through the command newCmd makes
// (cmdtest.CheckFlags); clear zeroes what is not a value (streams,
// constructors) before the options are compared.
func checkFlags[O any](t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *O) error) *cobra.Command, clear func(*O), tests []flagCase[O]) {
	t.Helper()
	cases := make([]cmdtest.FlagCase[O], len(tests))
	for i, tt := range tests {
		cases[i] = cmdtest.FlagCase[O]{Args: tt.args, Want: tt.want, WantErr: tt.wantErr}
	}
	cmdtest.CheckFlags(t, func(args ...string) (*O, error) { return parse(t, newCmd, args...) }, clear, cases)
}

// wantUsage is cmdtest.WantUsage.
func wantUsage(t *testing.T, args []string, err error, want string) {
	t.Helper()
	cmdtest.WantUsage(t, args, err, want)
}

// testIO is iostreams.Test: fake streams, all terminals (tty) or all piped.
func testIO(tty bool, stdin string) (*iostreams.IOStreams, *bytes.Buffer, *bytes.Buffer) {
	return iostreams.Test(tty, stdin)
}

// hintOf is cmdtest.Hint: the hint err carries, or "".
func hintOf(err error) string { return cmdtest.Hint(err) }

// testClient is the client constructor for backend b, in RSMQ's default
// namespace.
func testClient(b redistest.Backend) func() (*delayq.Client, error) {
	return func() (*delayq.Client, error) { return delayq.New(b.Client, delayq.Options{Prefix: b.Prefix}), nil }
}

// testKinds returns a registry constructor for b: every kind, under b's
// prefix.
func testKinds(b redistest.Backend) func() (*queues.Registry, error) {
	return func() (*queues.Registry, error) {
		q, _ := testClient(b)()
		return queuekinds.New(q, queues.Env{RDB: b.Client, Prefix: b.Prefix}), nil
	}
}

// newQueue creates queue name on b with attributes a and pushes bodies into
// it, returning their ids.
func newQueue(t *testing.T, b redistest.Backend, name string, a delayq.Attributes, bodies ...string) []string {
	t.Helper()
	q, _ := testClient(b)()
	ctx := context.Background()
	if err := q.Create(ctx, name, a); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, body := range bodies {
		p, err := q.Push(ctx, name, body, delayq.PushOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	return ids
}

// decode is cmdtest.DecodeJSON: it parses the JSON a run printed into v.
func decode(t *testing.T, out *bytes.Buffer, v any) {
	t.Helper()
	cmdtest.DecodeJSON(t, out.Bytes(), v)
}

// A bad namespace is a usage error of the client constructor, before it
// connects (the Factory here has no configuration to connect with).
func TestQueueClientChecksTheNamespace(t *testing.T) {
	f := &cmdutil.Factory{Getenv: func(string) string { return "" }}
	cmd := &cobra.Command{}
	cmd.Flags().String("namespace", "", "")
	_ = cmd.Flags().Set("namespace", "my app")
	_, err := queueClient(f, cmd)()
	if err == nil || !strings.Contains(err.Error(), `invalid --namespace "my app"`) || cmdutil.ExitCode(err, false) != cmdutil.ExitUsage {
		t.Fatalf("got %v", err)
	}
	if !clierr.IsUsage(err) {
		t.Fatalf("%v is not a usage error", err)
	}
}
