package queue

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/cli/search"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type ackOptions struct {
	cmdutil.Output
	Client func() (*delayq.Client, error)
	Queue  string
	Refs   []string // ids or receipts
	// Timeout (--timeout) bounds the repeats of an ack whose reply was
	// lost (conn.Repeat); the ack carries a token, so a repeat is safe.
	Timeout time.Duration
}

// NewCmdAck returns `chatq queue ack` (runF: see cmdutil.RunWith).
func NewCmdAck(f *cmdutil.Factory, runF func(context.Context, *ackOptions) error) *cobra.Command {
	opts := &ackOptions{}
	cmd := &cobra.Command{
		Use:   "ack QUEUE ID|RECEIPT...",
		Short: "Acknowledge (delete) received messages (RSMQ deleteMessage)",
		Long: `Delete received messages so they do not come back, in one round trip.

Name each message by its id (RSMQ's semantics: whoever holds the message,
it is deleted) or by the receipt poll printed for your delivery (ID.RC.FR):
a receipt acks only while no later receive has taken the message. A stale
receipt (the visibility timeout ended and the message was received again)
deletes nothing, since the other delivery now handles it.

Ids that are not in the queue (already acked, popped or dead-lettered) and
stale receipts are listed on stderr and make the command exit 1; the others
are still acked. JSON: {"acked":N,"missing":[...],"stale":[...]}.

An ack carries a token: when its reply is lost it is sent again within
--timeout, and the server answers the repeat with what the first acked
(kept 10 minutes), not "missing". When every repeat fails it exits 4: the
messages may be acked.`,
		Example: `  chatq queue ack jobs mc3x9rz0kqAbCdEfGhIjKlMnOpQrStUv
  chatq queue ack jobs mc3x9rz0kqAbCdEfGhIjKlMnOpQrStUv.1.1795268834364
  chatq queue poll jobs -n 10 --jq '.[].receipt' | xargs chatq queue ack jobs`,
		Args: cmdutil.MinArgs(2),
		RunE: cmdutil.RunWith(f, opts, runF, ackRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue, opts.Refs = args[0], args[1:]
			opts.Client = queueClient(f, cmd)
			if cfg := f.Config(); cfg != nil {
				opts.Timeout = cfg.Timeout
			}
			return nil, opts.validate()
		}),
	}
	return cmdutil.MarkWrite(cmd, "chatq queue peek QUEUE")
}

// validate checks the queue name; Ack checks the ids and receipts before
// any call.
func (o *ackOptions) validate() error { return checkName(o.Queue) }

type queueAckJSON struct {
	Acked   int      `json:"acked"`
	Missing []string `json:"missing"`
	Stale   []string `json:"stale"`
}

func ackRun(ctx context.Context, opts *ackOptions) error {
	q, err := opts.Client()
	if err != nil {
		return err
	}
	// With some not acked r says which and err why (not in the queue, or
	// stale). One token for every try: a repeat after a lost reply returns
	// what the first acked and deletes nothing more.
	opt := delayq.AckOptions{Token: rand.Text()}
	var r *delayq.AckResult
	var tries conn.Tries
	err = repeatSettled(ctx, opts.Timeout, func(ctx context.Context) (*delayq.AckResult, error) {
		opt.FirstTry = tries.First()
		return q.AckWith(ctx, opts.Queue, opt, opts.Refs...)
	}, &r)
	if r == nil {
		return queueErr(err)
	}
	out := queueAckJSON{Acked: r.Acked, Missing: orEmpty(r.Missing), Stale: orEmpty(r.Stale)}
	if err := reportLeft(opts.IO, opts.JSON, out, opts.Queue, "acked", r.Missing, r.Stale); err != nil {
		return err
	}
	if err != nil {
		return queueErr(err)
	}
	infoTTY(opts.IO, opts.JSON, "acked %s", plural(int64(r.Acked), "message"))
	return nil
}

type retryOptions struct {
	cmdutil.Output
	Client func() (*delayq.Client, error)
	Queue  string
	Refs   []string // ids or receipts; none with a selection
	Delay  time.Duration
	// Select picks the messages in flight to retry (--min-receives,
	// --inflight-for) when no ids are given; N is the most retried (0: all).
	Select filterFlags
	N      int
	// Timeout (--timeout) bounds the repeats of a retry whose reply was
	// lost (conn.Repeat); each retry carries a token, so a repeat is safe.
	Timeout time.Duration
}

// NewCmdRetry returns `chatq queue retry` (runF: see cmdutil.RunWith).
func NewCmdRetry(f *cmdutil.Factory, runF func(context.Context, *retryOptions) error) *cobra.Command {
	opts := &retryOptions{}
	cmd := &cobra.Command{
		Use:   "retry QUEUE (ID|RECEIPT... | --inflight-for DUR | --min-receives N) [--delay DUR] [-n N]",
		Short: "Make messages due again now or after a delay (RSMQ changeMessageVisibility); release stuck ones",
		Long: `Make messages due again, now or after --delay, instead of waiting for their
visibility timeout to end. Their receive counts are kept.

Name each by its id (RSMQ's changeMessageVisibility: whoever holds it) or
by the receipt of a delivery (ID.RC.FR, as poll, peek and get print it): a
stale receipt (the message was received again since) changes nothing. Any
number of ids and receipts, 100 per server call. Ids not in the queue and
stale receipts are listed on stderr and make the command exit 1; the others
are retried all the same.

Or select the messages in flight to release (what a dead worker holds):
--inflight-for DUR, those first received longer ago than DUR; --min-receives
N, those received at least N times; both: those that pass both; -n N, at
most N of them. 'chatq queue peek QUEUE' with the same flags shows them
first. chatq walks the queue in pages (as export does, each call bounded),
retrying each page's messages by their receipts as it goes: a message
received again or acked since its page was read is left as it is (counted
as stale or missing, not an error). stderr says how many were examined.
A message held by a running 'chatq queue work' gets its lease renewed by
that worker at its next heartbeat (the retry is undone) unless another
consumer receives it first; then the old job is killed at that heartbeat.

JSON: {"retried":N,"missing":[...],"stale":[...],"visible_at":MS}, with
"id" for a single id given, and "examined" for a selection.

A retry (and each page of a selection) carries a token: when its reply is
lost it is sent again within --timeout, and the server answers the repeat
with the first answer (kept 10 minutes). When every repeat fails it exits
4: the messages may be retried.`,
		Example: `  chatq queue retry jobs mc3x9rz0kqAbCdEfGhIjKlMnOpQrStUv
  chatq queue retry jobs mc3x9rz0kqAbCdEfGhIjKlMnOpQrStUv --delay 10m
  chatq queue retry "$CHATQ_QUEUE" "$CHATQ_RECEIPT" --delay 1m   # inside queue work
  chatq queue peek jobs --state inflight -n 1000 --jq '.[].receipt' | xargs chatq queue retry jobs
  chatq queue peek jobs --inflight-for 30m && chatq queue retry jobs --inflight-for 30m
  chatq queue retry bullmq:mail 42 43     # another kind: failed → wait, as Job.retry
  chatq queue retry asynq:default TASK_ID # archived, retry or scheduled → pending, as RunTask`,
		Args: cmdutil.MinArgs(1),
		RunE: cmdutil.RunWith(f, opts, runF, retryRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue, opts.Refs = args[0], args[1:]
			opts.Select.read(cmd.Flags())
			opts.Client = queueClient(f, cmd)
			if cfg := f.Config(); cfg != nil {
				opts.Timeout = cfg.Timeout
			}
			if isKindAddress(opts.Queue) {
				if opts.Delay != 0 || opts.Select.selecting() || len(opts.Refs) == 0 {
					return nil, cmdutil.WithHint(cmdutil.UsageErrorf("a queue of another kind retries jobs by id, now, without --delay or a selection"),
						fmt.Sprintf("list them with `chatq queue peek %s --state dead --jq '.[].id'`, or move every dead job back with `chatq queue redrive %s`", opts.Queue, opts.Queue))
				}
				target := targetOf(f, cmd, args[0])
				return func(ctx context.Context) error { return kindRetry(ctx, target, opts.Refs) }, nil
			}
			return nil, opts.validate()
		}),
	}
	cmd.Flags().DurationVar(&opts.Delay, "delay", 0, "due after this delay")
	opts.Select.addSelect(cmd.Flags())
	cmd.Flags().IntVarP(&opts.N, "count", "n", 0, "with a selection, retry at most N messages (0: all it selects)")
	return cmdutil.MarkWrite(cmd, "chatq queue peek QUEUE")
}

// validate checks --delay, the choice of ids or a selection, and the queue
// name; Retry checks the ids and receipts before any call.
func (o *retryOptions) validate() error {
	if err := delayq.CheckDuration("--delay", o.Delay, time.Millisecond); err != nil {
		return err
	}
	selecting := o.Select.selecting()
	switch {
	case len(o.Refs) > 0 && selecting:
		return cmdutil.WithHint(cmdutil.UsageErrorf("give ids or receipts, or a selection (--inflight-for, --min-receives), not both"),
			"to retry some of a selection, pipe it: chatq queue peek QUEUE --inflight-for DUR --jq '.[].receipt' | xargs chatq queue retry QUEUE")
	case len(o.Refs) == 0 && !selecting:
		return cmdutil.WithHint(cmdutil.UsageErrorf("retry needs ids or receipts, or a selection"),
			"name messages (chatq queue retry QUEUE ID...), or select those stuck in flight: --inflight-for 10m, --min-receives 5")
	case o.N < 0:
		return cmdutil.UsageErrorf("invalid -n %d: must not be negative", o.N)
	case o.N > 0 && !selecting:
		return cmdutil.UsageErrorf("-n limits a selection (--inflight-for, --min-receives); with ids, give fewer ids")
	}
	if err := o.Select.validate(); err != nil {
		return err
	}
	return checkName(o.Queue)
}

type queueRetryJSON struct {
	ID        string   `json:"id,omitempty"` // the one id given
	VisibleAt int64    `json:"visible_at"`
	Retried   int      `json:"retried"`
	Missing   []string `json:"missing"`
	Stale     []string `json:"stale"`
	Examined  *int     `json:"examined,omitempty"` // with a selection
}

func retryRun(ctx context.Context, opts *retryOptions) error {
	q, err := opts.Client()
	if err != nil {
		return err
	}
	if len(opts.Refs) == 0 {
		return retrySelection(ctx, q, opts)
	}
	// With some not retried r says which and err why (not in the queue,
	// or stale).
	r, err := opts.retry(ctx, q, opts.Refs)
	if r == nil {
		return queueErr(err)
	}
	out := queueRetryJSON{VisibleAt: r.VisibleAt.UnixMilli(), Retried: r.Retried, Missing: r.Missing, Stale: r.Stale}
	if len(opts.Refs) == 1 {
		// A receipt is ID.RC.FR (checked by Retry).
		out.ID, _, _ = strings.Cut(opts.Refs[0], ".")
	}
	if err := retryReport(opts, out); err != nil {
		return err
	}
	if err != nil {
		return queueErr(err)
	}
	if len(opts.Refs) == 1 {
		infoTTY(opts.IO, opts.JSON, "%s due at %s", opts.Refs[0], stamp(r.VisibleAt))
	} else {
		infoTTY(opts.IO, opts.JSON, "retried %s, due at %s", plural(int64(r.Retried), "message"), stamp(r.VisibleAt))
	}
	return nil
}

// retrySelection retries the messages in flight that opts.Select picks:
// an export's walk (every message present throughout is examined once),
// each page retried by its receipts as it comes.
func retrySelection(ctx context.Context, q *delayq.Client, opts *retryOptions) error {
	po := opts.Select.options()
	po.State, po.N = "inflight", opts.N
	examined := 0
	po.Progress = func(n, _ int) { examined = n }
	total := &delayq.AckResult{}
	_, err := q.Export(ctx, opts.Queue, po, func(page []delayq.Message) error {
		refs := make([]string, 0, len(page))
		for _, m := range page {
			refs = append(refs, cmp.Or(m.Receipt, m.ID))
		}
		r, err := opts.retry(ctx, q, refs)
		if r != nil {
			total.Retried += r.Retried
			total.Missing = append(total.Missing, r.Missing...)
			total.Stale = append(total.Stale, r.Stale...)
			total.VisibleAt = r.VisibleAt
		}
		// Missing or stale: acked or received again since the page was
		// read, so no longer stuck.
		if errors.Is(err, delayq.ErrMessageNotFound) || errors.Is(err, delayq.ErrStaleReceipt) {
			return nil
		}
		return err
	})
	if err != nil {
		if total.Retried > 0 {
			opts.IO.Infof("retried %s before the error", plural(int64(total.Retried), "message"))
		}
		return queueErr(err)
	}
	out := queueRetryJSON{VisibleAt: total.VisibleAt.UnixMilli(), Retried: total.Retried, Missing: total.Missing, Stale: total.Stale, Examined: &examined}
	if err := retryReport(opts, out); err != nil {
		return err
	}
	selected := total.Retried + len(total.Missing) + len(total.Stale)
	search.Report(opts.IO, examined, selected)
	if selected == 0 {
		return cmdutil.ErrNothing
	}
	infoTTY(opts.IO, opts.JSON, "retried %s, due at %s", plural(int64(total.Retried), "message"), stamp(total.VisibleAt))
	return nil
}

// retry retries refs with a token of their own, sent again with it after a
// lost reply within --timeout: a repeat returns the first answer and
// changes nothing more.
func (o *retryOptions) retry(ctx context.Context, q *delayq.Client, refs []string) (r *delayq.AckResult, err error) {
	opt := delayq.AckOptions{Token: rand.Text(), Retry: true, Delay: o.Delay}
	var tries conn.Tries
	err = repeatSettled(ctx, o.Timeout, func(ctx context.Context) (*delayq.AckResult, error) {
		opt.FirstTry = tries.First()
		return q.AckWith(ctx, o.Queue, opt, refs...)
	}, &r)
	return r, err
}

// repeatSettled runs call, an ack or retry with a token, through
// conn.Repeat and leaves its last result in r. Messages missing or stale
// are an answer, not a failure to repeat: conn.Repeat sees success then,
// and the error comes back from here with the result that goes with it.
func repeatSettled(ctx context.Context, timeout time.Duration, call func(context.Context) (*delayq.AckResult, error), r **delayq.AckResult) error {
	var settled error
	err := conn.Repeat(ctx, timeout, func(ctx context.Context) error {
		var err error
		*r, err = call(ctx)
		settled = nil
		if *r != nil && (errors.Is(err, delayq.ErrMessageNotFound) || errors.Is(err, delayq.ErrStaleReceipt)) {
			settled, err = err, nil
		}
		return err
	})
	if err != nil {
		return err
	}
	return settled
}

// retryReport prints out as JSON with -o json, and lists on stderr the
// messages not retried.
func retryReport(opts *retryOptions, out queueRetryJSON) error {
	missing, stale := out.Missing, out.Stale
	out.Missing, out.Stale = orEmpty(missing), orEmpty(stale)
	return reportLeft(opts.IO, opts.JSON, out, opts.Queue, "retried", missing, stale)
}

// reportLeft writes v with -o json, and lists on stderr the ids that were
// not in the queue and the stale receipts, which were not verb (acked,
// retried).
func reportLeft(io *iostreams.IOStreams, json bool, v any, queue, verb string, missing, stale []string) error {
	if json {
		if err := io.WriteJSON(v); err != nil {
			return err
		}
	}
	for _, id := range missing {
		io.Infof("not in queue %s: %s", queue, id)
	}
	for _, id := range stale {
		io.Infof("stale receipt, not %s: %s", verb, id)
	}
	return nil
}

// orEmpty is s, or an empty list for JSON's [] instead of null.
func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
