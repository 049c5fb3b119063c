package queue

import (
	"context"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

type statsOptions struct {
	cmdutil.Output
	Client    func() (*delayq.Client, error)
	Queue     string
	NoReindex bool
}

// NewCmdStats returns `chatq queue stats` (runF: see cmdutil.RunWith).
func NewCmdStats(f *cmdutil.Factory, runF func(context.Context, *statsOptions) error) *cobra.Command {
	opts := &statsOptions{}
	cmd := &cobra.Command{
		Use:   "stats QUEUE",
		Short: "Show a queue's attributes and its ready, delayed and in-flight messages",
		Long: `Show a queue's attributes (RSMQ getQueueAttributes) and its messages split,
at one instant of server time to the millisecond, into:

  ready     due now
  delayed   never received and not yet due
  inflight  received and invisible until the visibility timeout ends

RSMQ's hiddenmsgs (kept in the JSON, = delayed + inflight) lumps the last two
and compares against the time truncated to whole seconds, so it counts as
hidden a message that became due up to a second ago.

oldest_ready is how long the ready message that has waited longest has been
due: now minus its visible-at, the time work has waited for a consumer (it
grows when consumers fall behind or stop; a message scheduled for later does
not count until it is due). JSON also gives that message's id, its sent time
and its visible-at, so the age since it was sent (SQS's
ApproximateAgeOfOldestMessage) is now - oldest_ready_sent.

When the queue's dead-letter queue does not exist (it was deleted), stats
warns: its policy is off, and messages received too often are delivered
again instead of moved (never lost) until the queue is created again.

It is one read-only call (and an HEXISTS when the queue has a dead-letter
queue), O(log n) at any queue size. The split of invisible
messages into delayed and in flight comes from chatq's index of received
messages; when an rsmq client received from the queue (or created it), the
index is incomplete and stats first rebuilds it in bounded steps (calls of
about a millisecond of server time each; the queue stays in use). With
--no-reindex, or for a user who may not write, it reports the split as the
index has it and says so (split_exact false in JSON).`,
		Example: `  chatq queue stats jobs
  chatq queue stats jobs --jq .ready
  chatq queue stats jobs --jq '.oldest_ready_ms / 1000'   # seconds the oldest ready message has waited
  chatq queue stats jobs --no-reindex -o json   # never writes
  chatq queue stats bullmq:mail                  # another kind: its counts by chatq's states
  chatq queue stats stream:orders/billing -o json`,
		Args: cmdutil.ExactArgs(1),
		RunE: cmdutil.RunWith(f, opts, runF, statsRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue = args[0]
			opts.Client = queueClient(f, cmd)
			if isKindAddress(opts.Queue) {
				target := targetOf(f, cmd, args[0])
				return func(ctx context.Context) error { return kindStats(ctx, target) }, nil
			}
			return nil, opts.validate()
		}),
	}
	cmd.Flags().BoolVar(&opts.NoReindex, "no-reindex", false, "do not rebuild an incomplete index of received messages (never write)")
	return cmdutil.MarkRead(cmd)
}

func (o *statsOptions) validate() error { return checkName(o.Queue) }

// queueStatsJSON has RSMQ's getQueueAttributes fields (vt and delay in
// seconds, created and modified in Unix seconds) and chatq's.
type queueStatsJSON struct {
	Name        string `json:"name"`
	VT          int64  `json:"vt"`
	Delay       int64  `json:"delay"`
	MaxSize     int    `json:"maxsize"`
	TotalRecv   int64  `json:"totalrecv"`
	TotalSent   int64  `json:"totalsent"`
	Created     int64  `json:"created"`
	Modified    int64  `json:"modified"`
	Msgs        int64  `json:"msgs"`
	HiddenMsgs  int64  `json:"hiddenmsgs"`
	Ready       int64  `json:"ready"`
	Delayed     int64  `json:"delayed"`
	InFlight    int64  `json:"inflight"`
	MaxReceives int    `json:"max_receives"`
	DeadLetter  string `json:"dead_letter"`
	NextVisible any    `json:"next_visible"`
	Now         int64  `json:"now"`
	// SplitExact is false when delayed/inflight may be off (chatq's index
	// of received messages is incomplete); msgs and ready are exact.
	SplitExact bool `json:"split_exact"`
	// The ready message that has waited longest to be received (null when
	// none is ready): how long it has been due (now - its visible-at), its
	// id, when it was sent and when it became due, ms.
	OldestReadyMs        any `json:"oldest_ready_ms"`
	OldestReadyID        any `json:"oldest_ready_id"`
	OldestReadySent      any `json:"oldest_ready_sent"`
	OldestReadyVisibleAt any `json:"oldest_ready_visible_at"`
	// DeadLetterMissing: dead_letter names a queue that does not exist.
	DeadLetterMissing bool `json:"dead_letter_missing"`
	// TotalDead counts the messages moved to the dead-letter queue.
	TotalDead int64 `json:"totaldead"`
}

func statsJSON(s *delayq.Stats) queueStatsJSON {
	j := queueStatsJSON{
		Name: s.Name, VT: int64(s.VT.Seconds()), Delay: int64(s.Delay.Seconds()), MaxSize: s.MaxSize,
		TotalRecv: s.TotalRecv, TotalSent: s.TotalSent, Created: s.Created.Unix(), Modified: s.Modified.Unix(),
		Msgs: s.Messages, HiddenMsgs: s.Delayed + s.InFlight, Ready: s.Ready, Delayed: s.Delayed, InFlight: s.InFlight,
		MaxReceives: s.MaxReceives, DeadLetter: s.DeadLetter, NextVisible: ms(s.NextVisible), Now: s.Now.UnixMilli(),
		SplitExact: s.SplitExact, DeadLetterMissing: s.DeadLetterMissing, TotalDead: s.TotalDead,
	}
	if o := s.OldestReady; o != nil {
		j.OldestReadyMs, j.OldestReadyID = s.OldestReadyAge.Milliseconds(), o.ID
		j.OldestReadySent, j.OldestReadyVisibleAt = ms(o.Sent), o.VisibleAt.UnixMilli()
	}
	return j
}

func statsRun(ctx context.Context, opts *statsOptions) error {
	q, err := opts.Client()
	if err != nil {
		return err
	}
	s, err := q.Stats(ctx, opts.Queue)
	if err != nil {
		return queueErr(err)
	}
	if !s.SplitExact && !opts.NoReindex {
		infoTTY(opts.IO, opts.JSON, "rebuilding chatq's index of received messages (another client received from %s)", opts.Queue)
		err := q.Reindex(ctx, opts.Queue)
		switch {
		case err == nil:
			if s, err = q.Stats(ctx, opts.Queue); err != nil {
				return queueErr(err)
			}
		case mayNotWrite(err):
			opts.IO.Infof("warning: this user may not rebuild the index of received messages: %v", err)
		default:
			return queueErr(err)
		}
	}
	if !s.SplitExact {
		opts.IO.Infof("warning: delayed and inflight may be off: an rsmq client received from %s (messages and ready are exact)", opts.Queue)
	}
	if s.DeadLetterMissing {
		warnDeadLetterMissing(opts.IO, s.Name, s.DeadLetter, s.MaxReceives)
	}
	if opts.JSON {
		return opts.IO.WriteJSON(statsJSON(s))
	}
	policy := "-"
	if s.DeadLetter != "" {
		policy = plural(int64(s.MaxReceives), "receive") + ", then " + s.DeadLetter
		if s.DeadLetterMissing {
			policy += " (missing: off)"
		}
	}
	maxSize := any(s.MaxSize)
	if s.MaxSize == -1 {
		maxSize = "unlimited"
	}
	t := opts.IO.NewTable("FIELD", "VALUE")
	t.Row("name", s.Name)
	t.Row("messages", s.Messages)
	t.Row("ready", s.Ready)
	t.Row("delayed", s.Delayed)
	t.Row("inflight", s.InFlight)
	t.Row("oldest_ready", oldestReady(s))
	t.Row("next_visible", stamp(s.NextVisible))
	t.Row("vt", s.VT)
	t.Row("delay", s.Delay)
	t.Row("maxsize", maxSize)
	t.Row("dead_letter", policy)
	t.Row("totalsent", s.TotalSent)
	t.Row("totalrecv", s.TotalRecv)
	t.Row("totaldead", s.TotalDead)
	t.Row("created", stamp(s.Created))
	t.Row("modified", stamp(s.Modified))
	t.Row("now", stamp(s.Now))
	return t.Flush()
}

// mayNotWrite reports an error of a user without write permission (ACL)
// or of a read-only replica.
func mayNotWrite(err error) bool {
	return conn.PermissionDenied(err) || redis.HasErrorPrefix(err, "READONLY")
}

// oldestReady renders the age of the oldest ready message for people, or
// "-" when none is ready.
func oldestReady(s *delayq.Stats) string {
	if s.OldestReady == nil {
		return "-"
	}
	return roughly(s.OldestReadyAge)
}

// warnDeadLetterMissing says on stderr that q's dead-letter queue dlq does
// not exist, and what receive does meanwhile.
func warnDeadLetterMissing(ios *iostreams.IOStreams, q, dlq string, maxReceives int) {
	ios.Infof("warning: queue %s names %s as its dead-letter queue, which does not exist: the policy is off, and a message received %d times is delivered again instead of moved (never lost)", q, dlq, maxReceives)
	ios.Infof("hint: create it with `chatq queue create %s`, or drop the policy with `chatq queue set %s --max-receives 0 --dead-letter ''`", dlq, q)
}
