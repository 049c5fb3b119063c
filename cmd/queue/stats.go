package queue

import (
	"context"
	"strings"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

type queueStatsOptions struct {
	f         *cmdutil.Factory
	cmd       *cobra.Command
	queue     string
	noReindex bool
}

func newQueueStatsCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueStatsOptions{f: f}
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

It is one read-only call, O(log n) at any queue size. The split of invisible
messages into delayed and in flight comes from chatq's index of received
messages; when an rsmq client received from the queue (or created it), the
index is incomplete and stats first rebuilds it in bounded steps (calls of
about a millisecond of server time each; the queue stays in use). With
--no-reindex, or for a user who may not write, it reports the split as the
index has it and says so (split_exact false in JSON).`,
		Example: `  chatq queue stats jobs
  chatq queue stats jobs -o json | jq .ready
  chatq queue stats jobs --no-reindex -o json   # never writes`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue = cmd, args[0]
			return queueStatsRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.noReindex, "no-reindex", false, "do not rebuild an incomplete index of received messages (never write)")
	return cmd
}

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
}

func statsJSON(s *delayq.Stats) queueStatsJSON {
	return queueStatsJSON{
		Name: s.Name, VT: int64(s.VT.Seconds()), Delay: int64(s.Delay.Seconds()), MaxSize: s.MaxSize,
		TotalRecv: s.TotalRecv, TotalSent: s.TotalSent, Created: s.Created.Unix(), Modified: s.Modified.Unix(),
		Msgs: s.Messages, HiddenMsgs: s.Delayed + s.InFlight, Ready: s.Ready, Delayed: s.Delayed, InFlight: s.InFlight,
		MaxReceives: s.MaxReceives, DeadLetter: s.DeadLetter, NextVisible: ms(s.NextVisible), Now: s.Now.UnixMilli(),
		SplitExact: s.SplitExact,
	}
}

func queueStatsRun(ctx context.Context, opts *queueStatsOptions) error {
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	s, err := q.Stats(ctx, opts.queue)
	if err != nil {
		return queueErr(err)
	}
	if !s.SplitExact && !opts.noReindex {
		infoTTY(opts.f, "rebuilding chatq's index of received messages (another client received from %s)", opts.queue)
		err := q.Reindex(ctx, opts.queue)
		switch {
		case err == nil:
			if s, err = q.Stats(ctx, opts.queue); err != nil {
				return queueErr(err)
			}
		case mayNotWrite(err):
			opts.f.IO.Infof("warning: this user may not rebuild the index of received messages: %v", err)
		default:
			return queueErr(err)
		}
	}
	if !s.SplitExact {
		opts.f.IO.Infof("warning: delayed and inflight may be off: an rsmq client received from %s (messages and ready are exact)", opts.queue)
	}
	if opts.f.JSON() {
		return opts.f.WriteJSON(statsJSON(s))
	}
	policy := "-"
	if s.DeadLetter != "" {
		policy = plural(int64(s.MaxReceives), "receive") + ", then " + s.DeadLetter
	}
	maxSize := any(s.MaxSize)
	if s.MaxSize == delayq.Unlimited {
		maxSize = "unlimited"
	}
	t := opts.f.NewTable("FIELD", "VALUE")
	t.Row("name", s.Name)
	t.Row("messages", s.Messages)
	t.Row("ready", s.Ready)
	t.Row("delayed", s.Delayed)
	t.Row("inflight", s.InFlight)
	t.Row("next_visible", stamp(s.NextVisible))
	t.Row("vt", s.VT)
	t.Row("delay", s.Delay)
	t.Row("maxsize", maxSize)
	t.Row("dead_letter", policy)
	t.Row("totalsent", s.TotalSent)
	t.Row("totalrecv", s.TotalRecv)
	t.Row("created", stamp(s.Created))
	t.Row("modified", stamp(s.Modified))
	t.Row("now", stamp(s.Now))
	return t.Flush()
}

// mayNotWrite reports an error of a user without write permission (ACL)
// or of a read-only replica.
func mayNotWrite(err error) bool {
	return redis.HasErrorPrefix(err, "NOPERM") || redis.HasErrorPrefix(err, "READONLY") ||
		strings.Contains(err.Error(), "can't run this command")
}
