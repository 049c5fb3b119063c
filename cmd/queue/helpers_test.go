package queue

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/internal/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

// parse runs the command newCmd makes on args, under a group with
// --namespace as NewCmd gives it, with a runF that keeps the options: it
// returns them (nil when the command did not get to run) and the error.
// Leading "-o json" args stand for the global flag.
func parse[O any](t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	output := "text"
	if len(args) >= 2 && args[0] == "-o" {
		output, args = args[1], args[2:]
	}
	f := &cmdutil.Factory{IO: &iostreams.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard},
		Getenv: func(string) string { return "" }}
	f.Load(&conn.Config{Output: output}, nil)
	var got *O
	cmd := newCmd(f, func(_ context.Context, o *O) error { got = o; return nil })
	group := &cobra.Command{Use: "queue", SilenceUsage: true, SilenceErrors: true}
	group.PersistentFlags().String("namespace", "", "")
	group.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageErr(err) })
	group.AddCommand(cmd)
	group.SetArgs(append([]string{cmd.Name()}, args...))
	group.SetOut(io.Discard)
	group.SetErr(io.Discard)
	err := group.Execute()
	return got, err
}

// flagCase is a row of a flags → options table: the arguments, and the
// options runF gets or the usage error they make.
type flagCase[O any] struct {
	args    []string
	want    O
	wantErr string
}

// checkFlags runs each case through the command newCmd makes; clear
// zeroes what is not a value (streams, constructors) before the options are
// compared.
func checkFlags[O any](t *testing.T, newCmd func(*cmdutil.Factory, func(context.Context, *O) error) *cobra.Command, clear func(*O), tests []flagCase[O]) {
	t.Helper()
	for _, tt := range tests {
		got, err := parse(t, newCmd, tt.args...)
		if tt.wantErr != "" {
			wantUsage(t, tt.args, err, tt.wantErr)
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		clear(got)
		if !reflect.DeepEqual(*got, tt.want) {
			t.Errorf("%q: got %+v, want %+v", tt.args, *got, tt.want)
		}
	}
}

// wantUsage fails t unless err is a usage error (exit 2) saying want.
// Cobra's own checks of flag groups are not typed (chatq's main makes them
// exit 2): for them only the text is checked.
func wantUsage(t *testing.T, args []string, err error, want string) {
	t.Helper()
	switch {
	case err == nil:
		t.Errorf("%q: no error, want %q", args, want)
	case !strings.Contains(err.Error(), want):
		t.Errorf("%q: error %q, want %q", args, err, want)
	case strings.Contains(err.Error(), "if any flags in the group"), strings.Contains(err.Error(), "at least one of the flags"):
	case cmdutil.ExitCode(err, false) != cmdutil.ExitUsage:
		t.Errorf("%q: %v exits %d, want 2", args, err, cmdutil.ExitCode(err, false))
	}
}

// testIO returns fake streams, all terminals (tty) or all piped.
func testIO(tty bool, stdin string) (ios *iostreams.IOStreams, out, errOut *bytes.Buffer) {
	out, errOut = &bytes.Buffer{}, &bytes.Buffer{}
	return &iostreams.IOStreams{In: strings.NewReader(stdin), Out: out, ErrOut: errOut, OutTTY: tty, ErrTTY: tty}, out, errOut
}

// testClient is the client constructor for backend b, in RSMQ's default
// namespace.
func testClient(b redistest.Backend) func() (*delayq.Client, error) {
	return func() (*delayq.Client, error) { return delayq.New(b.Client, delayq.Options{Prefix: b.Prefix}), nil }
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

// decode parses the JSON a run printed into v.
func decode(t *testing.T, out *bytes.Buffer, v any) {
	t.Helper()
	if err := json.Unmarshal(out.Bytes(), v); err != nil {
		t.Fatalf("not JSON: %v: %q", err, out)
	}
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
	var ue interface{ Usage() bool }
	if !errors.As(err, &ue) {
		t.Fatalf("%v is not a usage error", err)
	}
}
