package queue

import (
	"context"
	"errors"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type getOptions struct {
	cmdutil.Output
	Client func() (*delayq.Client, error)
	Queue  string
	Ref    string // an id or a receipt
}

// NewCmdGet returns `chatq queue get` (runF: see cmdutil.RunWith).
func NewCmdGet(f *cmdutil.Factory, runF func(context.Context, *getOptions) error) *cobra.Command {
	opts := &getOptions{}
	cmd := &cobra.Command{
		Use:   "get QUEUE ID",
		Short: "Show one message by id, with its state, without receiving it",
		Long: `Show one message: its body, state (ready, delayed or inflight), receive
count, first receive, when it was sent (from the id) and when it becomes
visible, read at one instant of the server's time. Nothing changes.

ID may also be a receipt (ID.RC.FR). A message that is not in the queue
(acked, popped, dead-lettered, or never there) exits 1; a malformed id
exits 2. JSON: the fields of peek -o json for one message.

A received message shows its receipt (its latest delivery's). A message a
dead-letter move brought here shows where it came from, its receive count
there and when it moved (dead_lettered_from, _rc, _at; in JSON
"dead_lettered":{"from","rc","at"}); redrive sends it back there.`,
		Example: `  chatq queue get jobs hodb3yo4luDdAvOIizGxHU1g9i27CHH2
  chatq queue get jobs hodb3yo4luDdAvOIizGxHU1g9i27CHH2 --jq .message
  chatq queue get jobs-dead hodb3yo4luDdAvOIizGxHU1g9i27CHH2 --jq .dead_lettered
  chatq queue get bullmq:mail 42 --jq .error          # another kind: by its own id
  chatq queue get asynq:default 2f6c9a1e-6b1e-4c1e-9f1e-1b2c3d4e5f60`,
		Args: cmdutil.ExactArgs(2),
		RunE: cmdutil.RunWith(f, opts, runF, getRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue, opts.Ref = args[0], args[1]
			opts.Client = queueClient(f, cmd)
			if isKindAddress(opts.Queue) {
				target := targetOf(f, cmd, args[0])
				return func(ctx context.Context) error { return kindGet(ctx, target, opts.Ref) }, nil
			}
			return nil, opts.validate()
		}),
	}
	return cmdutil.MarkRead(cmd)
}

// validate checks the queue name; Get checks the id before any call.
func (o *getOptions) validate() error { return checkName(o.Queue) }

func getRun(ctx context.Context, opts *getOptions) error {
	q, err := opts.Client()
	if err != nil {
		return err
	}
	m, err := q.Get(ctx, opts.Queue, opts.Ref)
	if errors.Is(err, delayq.ErrInvalid) {
		// The queue name was checked: the id is bad (before any call).
		return cmdutil.WithHint(err, "a message id is the 32 characters push and poll print (e.g. hodb3yo4luDdAvOIizGxHU1g9i27CHH2), or a receipt ID.RC.FR; see `chatq queue peek "+opts.Queue+"`")
	}
	if errors.Is(err, delayq.ErrMessageNotFound) {
		return cmdutil.WithHint(err, "it was acked, popped, dead-lettered or redriven already, or the id is wrong (see `chatq queue peek "+opts.Queue+"`)")
	}
	if err != nil {
		return queueErr(err)
	}
	if opts.JSON {
		return opts.IO.WriteJSON(toPeekJSON(*m))
	}
	t := opts.IO.NewTable("FIELD", "VALUE")
	t.Row("id", m.ID)
	t.Row("state", m.State)
	t.Row("rc", m.RC)
	t.Row("first_receive", stamp(m.FR))
	t.Row("sent", stamp(m.Sent))
	t.Row("visible_at", stamp(m.VisibleAt))
	t.Row("now", stamp(m.Now))
	if m.Receipt != "" {
		t.Row("receipt", m.Receipt)
	}
	if m.DeadLetteredFrom != "" {
		t.Row("dead_lettered_from", m.DeadLetteredFrom)
		t.Row("dead_lettered_rc", m.DeadLetteredRC)
		t.Row("dead_lettered_at", stamp(m.DeadLetteredAt))
	}
	t.Row("message", m.Body)
	return t.Flush()
}
