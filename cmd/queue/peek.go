package queue

import (
	"context"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/search"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type peekOptions struct {
	cmdutil.Output
	Client func() (*delayq.Client, error)
	Queue  string
	N      int
	Filter filterFlags
}

// NewCmdPeek returns `chatq queue peek` (runF: see cmdutil.RunWith).
func NewCmdPeek(f *cmdutil.Factory, runF func(context.Context, *peekOptions) error) *cobra.Command {
	opts := &peekOptions{}
	cmd := &cobra.Command{
		Use:   "peek QUEUE [-n N] [--state ready|delayed|inflight] [--older-than DUR] [--grep PATTERN [--regexp]] [--min-receives N] [--inflight-for DUR]",
		Short: "Show messages without receiving them, by due time; search and select them",
		Long: `Show the first N messages by the time they become visible, with their state
(ready, delayed or inflight) and receive count, without receiving them:
nothing changes.

--state keeps the messages in one state: ready (due now), delayed (not due,
never received) or inflight (received, not due: a consumer holds it; read
from chatq's index of received messages). --older-than keeps the messages
sent longer ago than DUR (the send time is in the id). Both together keep
the messages that pass both. A filter that matches few messages reads the
queue in many calls, each examining at most 1,000 messages, until N are
found or the queue ends; each page is read at its own instant.

Search: --grep PATTERN keeps the messages whose body or id contains
PATTERN, byte for byte (no pattern syntax; case-sensitive). The server
matches it inside each call, so only matches cross the network. With
--regexp, PATTERN is a regular expression (Go's RE2 syntax), matched here
over pages of 250 messages (Lua has no regular expressions). Each call
reads at most about 1 MiB of bodies.

Stuck messages: --inflight-for DUR keeps the messages in flight whose first
receive was longer ago than DUR (RSMQ records the first receive, not the
latest: for a message received once, how long a consumer has held it);
--min-receives N the messages received at least N times. 'chatq queue
retry QUEUE' with the same flags releases what this shows.

With --grep, --min-receives or --inflight-for, stderr says how many
messages were examined and how many matched. JSON: an array of poll's
fields plus "visible_at", "state", "receipt" (a received message's latest
delivery, for ack or retry by receipt) and "dead_lettered" ({"from","rc",
"at"}: where a dead-lettered message came from, its receive count there
and when it moved).`,
		Example: `  chatq queue peek jobs
  chatq queue peek jobs -n 100 -o json
  chatq queue peek jobs --state inflight
  chatq queue peek jobs --state ready --older-than 1h -n 1000 --jq '.[].id'
  chatq queue peek jobs --grep '"order":4711' -n 1
  chatq queue peek jobs --grep 'order.?47[0-9]{2}' --regexp -o json
  chatq queue peek jobs --inflight-for 10m --min-receives 3
  chatq queue peek bullmq:mail --state dead --grep '"user":7'
  chatq queue peek asynq:default --state retry -n 20 -o json
  chatq queue peek stream:orders/billing --inflight-for 10m   # entries idle 10 minutes`,
		Args: cmdutil.ExactArgs(1),
		RunE: cmdutil.RunWith(f, opts, runF, peekRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue = args[0]
			opts.Filter.read(cmd.Flags())
			opts.Client = queueClient(f, cmd)
			if isKindAddress(opts.Queue) {
				if err := opts.Filter.validateKind(); err != nil {
					return nil, err
				}
				target := targetOf(f, cmd, args[0])
				return func(ctx context.Context) error { return kindPeek(ctx, target, &opts.Filter, opts.N) }, nil
			}
			return nil, opts.validate()
		}),
	}
	cmd.Flags().IntVarP(&opts.N, "count", "n", 10, "show up to N messages")
	opts.Filter.addState(cmd)
	opts.Filter.Search.Add(cmd.Flags(), "body or id")
	opts.Filter.addSelect(cmd.Flags())
	return cmdutil.MarkRead(cmd)
}

type peekJSON struct {
	messageJSON
	VisibleAt    int64             `json:"visible_at"`
	State        string            `json:"state"`
	DeadLettered *deadLetteredJSON `json:"dead_lettered,omitempty"`
}

func toPeekJSON(m delayq.Message) peekJSON {
	return peekJSON{messageJSON: toMessageJSON(m), VisibleAt: m.VisibleAt.UnixMilli(), State: m.State, DeadLettered: toDeadLettered(m)}
}

func (o *peekOptions) validate() error {
	if o.N < 1 {
		return cmdutil.UsageErrorf("invalid -n %d: must be at least 1", o.N)
	}
	if err := o.Filter.validate(); err != nil {
		return err
	}
	return checkName(o.Queue)
}

func peekRun(ctx context.Context, opts *peekOptions) error {
	po := opts.Filter.options()
	po.N = opts.N
	examined := 0
	po.Progress = func(n, _ int) { examined = n }
	q, err := opts.Client()
	if err != nil {
		return err
	}
	ps, err := q.Peek(ctx, opts.Queue, po)
	if err != nil {
		return queueErr(err)
	}
	if opts.JSON {
		out := make([]peekJSON, 0, len(ps))
		for _, p := range ps {
			out = append(out, toPeekJSON(p))
		}
		if err := opts.IO.WriteJSON(out); err != nil {
			return err
		}
	} else {
		t := opts.IO.NewTable("ID", "STATE", "VISIBLE_AT", "RC", "MESSAGE").WhenEmpty("no messages")
		for _, p := range ps {
			t.Row(p.ID, p.State, stamp(p.VisibleAt), p.RC, p.Body)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if opts.Filter.selecting() {
		search.Report(opts.IO, examined, len(ps))
	}
	if len(ps) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}
