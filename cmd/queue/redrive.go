package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type queueRedriveOptions struct {
	f   *cmdutil.Factory
	cmd *cobra.Command
	dlq string
	to  string
	n   int
}

func newQueueRedriveCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueRedriveOptions{f: f}
	cmd := &cobra.Command{
		Use:   "redrive DLQ [--to QUEUE] [-n N]",
		Short: "Move dead-lettered messages back to their queue, keeping ids and bodies",
		Long: `Move the messages of dead-letter queue DLQ back to a queue, oldest first:
each keeps its id and body, starts with no receive count, and is due at
once in the destination. Prints how many moved.

Without --to the destination is the queue whose dead-letter queue is DLQ
(set with --max-receives N --dead-letter DLQ); with none or several such
queues, name it with --to.

Each server call moves up to 100 messages atomically: a message is in
exactly one of the two queues at every moment, whatever consumers of
either do meanwhile. The command moves at most as many messages as DLQ
held when it started (or -n N), so messages dead-lettered while it runs
do not keep it going. Left in DLQ, and reported: messages in flight there
(a consumer holds them; a later redrive takes them), messages whose id the
destination already has, and bodies over the destination's maxsize (these
two exit 1). Running it again is always safe: it moves only what is still
in DLQ.

JSON: {"from","to","moved","skipped_inflight","conflicts":[ids],
"too_long":[ids],"limit"}. Not available on Redis Cluster (the two queues
are in different slots, as for dead-letter policies).`,
		Example: `  chatq queue redrive jobs-dead
  chatq queue redrive jobs-dead --to jobs -n 100
  chatq queue redrive jobs-dead -o json`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.dlq = cmd, args[0]
			return queueRedriveRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.to, "to", "", "destination queue (default: the queue whose dead-letter queue is DLQ)")
	cmd.Flags().IntVarP(&opts.n, "count", "n", 0, "move at most N messages (default: as many as DLQ holds at the start)")
	return cmd
}

type queueRedriveJSON struct {
	From            string   `json:"from"`
	To              string   `json:"to"`
	Moved           int      `json:"moved"`
	SkippedInFlight int      `json:"skipped_inflight"`
	Conflicts       []string `json:"conflicts"`
	TooLong         []string `json:"too_long"`
	Limit           int      `json:"limit"`
}

func queueRedriveRun(ctx context.Context, opts *queueRedriveOptions) error {
	if opts.n < 0 {
		return cmdutil.UsageErrorf("invalid -n %d: must be at least 1 (or 0 for all)", opts.n)
	}
	if err := delayq.CheckName(opts.dlq); err != nil {
		return err
	}
	if opts.to != "" {
		if err := delayq.CheckName(opts.to); err != nil {
			return err
		}
		if opts.to == opts.dlq {
			return cmdutil.WithHint(cmdutil.UsageErrorf("--to %s: a queue cannot be redriven into itself", opts.to),
				"name the queue the messages came from, e.g. the one whose `chatq queue stats` shows dead_letter "+opts.dlq)
		}
	}
	if opts.f.Config().Cluster {
		return cmdutil.WithHint(cmdutil.UsageErrorf("redrive is not available on Redis Cluster: the two queues are in different slots"),
			"move messages with `chatq queue poll DLQ` and `chatq queue push QUEUE` (new ids), as dead-letter policies are refused on Cluster too")
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	var prog *iostreams.Progress
	defer func() {
		if prog != nil {
			prog.Done()
		}
	}()
	last := 0
	res, err := q.Redrive(ctx, opts.dlq, delayq.RedriveOptions{To: opts.to, N: opts.n, Progress: func(moved, limit int) {
		if prog == nil {
			prog = opts.f.IO.NewProgress("redriving", limit)
		}
		prog.Add(moved - last)
		last = moved
	}})
	switch {
	case errors.Is(err, delayq.ErrInvalid) && opts.to == "":
		// The names and -n were checked: no queue or several have dlq as
		// their dead-letter queue (res.Sources).
		hint := fmt.Sprintf("name the destination: chatq queue redrive %s --to QUEUE", opts.dlq)
		if len(res.Sources) == 0 {
			hint += " (no queue's dead-letter policy names it: see `chatq queue stats QUEUE`)"
		}
		return cmdutil.WithHint(err, hint)
	case err != nil && (res == nil || res.Moved == 0):
		return queueErr(err)
	case err != nil:
		return partialRedrive(ctx, opts, res, err)
	}
	if opts.f.JSON() {
		if err := opts.f.IO.WriteJSON(redriveJSON(opts.dlq, res)); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(opts.f.IO.Out, res.Moved)
	}
	infoTTY(opts.f, "moved %s from %s to %s", plural(int64(res.Moved), "message"), opts.dlq, res.To)
	if res.InFlight > 0 {
		opts.f.IO.Infof("left %s in flight in %s (a consumer holds them; a later redrive takes them)", plural(int64(res.InFlight), "message"), opts.dlq)
	}
	if len(res.Exists) > 0 {
		opts.f.IO.Infof("left %s in %s whose id %s already has: %s", plural(int64(len(res.Exists)), "message"), opts.dlq, res.To, strings.Join(res.Exists, " "))
	}
	if len(res.TooLong) > 0 {
		opts.f.IO.Infof("left %s in %s over %s's maxsize: %s", plural(int64(len(res.TooLong)), "message"), opts.dlq, res.To, strings.Join(res.TooLong, " "))
	}
	if left := len(res.Exists) + len(res.TooLong); left > 0 {
		var fix []string
		if len(res.Exists) > 0 {
			fix = append(fix, fmt.Sprintf("for an id in both, compare `chatq queue get %s ID` with `chatq queue get %s ID` and ack the copy you do not want", res.To, opts.dlq))
		}
		if len(res.TooLong) > 0 {
			fix = append(fix, fmt.Sprintf("for a long body, raise the limit with `chatq queue set %s --maxsize N` (up to 65536, or -1 for unlimited)", res.To))
		}
		return cmdutil.WithHint(fmt.Errorf("%s left in %s that cannot move to %s", plural(int64(left), "message"), opts.dlq, res.To),
			strings.Join(fix, "; ")+"; then redrive again")
	}
	switch {
	case res.Moved == 0:
		return cmdutil.ErrNothing
	}
	return nil
}

func redriveJSON(dlq string, res *delayq.Redriven) queueRedriveJSON {
	out := queueRedriveJSON{From: dlq, To: res.To, Moved: res.Moved, SkippedInFlight: res.InFlight,
		Conflicts: res.Exists, TooLong: res.TooLong, Limit: res.Limit}
	if out.Conflicts == nil {
		out.Conflicts = []string{}
	}
	if out.TooLong == nil {
		out.TooLong = []string{}
	}
	return out
}

// partialRedrive reports a redrive that failed after moving messages: how
// many, and that running it again is safe.
func partialRedrive(ctx context.Context, opts *queueRedriveOptions, res *delayq.Redriven, err error) error {
	if opts.f.JSON() {
		_ = opts.f.IO.WriteJSON(redriveJSON(opts.dlq, res))
	}
	again := fmt.Sprintf("`chatq queue redrive %s --to %s`", opts.dlq, res.To)
	if ctx.Err() != nil {
		opts.f.IO.Infof("moved %s to %s before the interrupt; the rest is still in %s: continue with %s",
			plural(int64(res.Moved), "message"), res.To, opts.dlq, again)
		return err
	}
	hint := fmt.Sprintf("%s moved to %s before the error; the rest is still in %s: continue with %s",
		plural(int64(res.Moved), "message"), res.To, opts.dlq, again)
	if conn.ReplyLost(err) {
		hint = fmt.Sprintf("%s moved to %s before the last call, whose reply was lost: it may have moved up to 100 more (each message is in one queue or the other, never both); check with `chatq queue stats %s`, and continue with %s, which moves only what is still in %s",
			plural(int64(res.Moved), "message"), res.To, opts.dlq, again, opts.dlq)
	}
	return cmdutil.WithHint(queueErr(fmt.Errorf("after moving %d messages: %w", res.Moved, err)), hint)
}
