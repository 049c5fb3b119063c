package queue

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type redriveOptions struct {
	cmdutil.Output
	Client  func() (*delayq.Client, error)
	Cluster bool // the server is a Redis Cluster
	DLQ     string
	To      string
	N       int
}

// NewCmdRedrive returns `chatq queue redrive` (runF: see cmdutil.RunWith).
func NewCmdRedrive(f *cmdutil.Factory, runF func(context.Context, *redriveOptions) error) *cobra.Command {
	opts := &redriveOptions{}
	cmd := &cobra.Command{
		Use:   "redrive DLQ [--to QUEUE] [-n N]",
		Short: "Move dead-lettered messages back to their queue, keeping ids and bodies",
		Long: `Move the messages of dead-letter queue DLQ back to a queue, oldest first:
each keeps its id and body, starts with no receive count, and is due at
once in the destination. Prints how many moved.

Without --to each message goes back to the queue it came from: chatq
records it when it dead-letters a message (see 'chatq queue get DLQ ID').
A message without that record (dead-lettered before chatq recorded it, or
pushed into DLQ), or whose queue is gone, goes to the queue whose
dead-letter queue is DLQ (set with --max-receives N --dead-letter DLQ);
when there are none or several such queues it stays, is reported, and the
command exits 1 (2 when nothing could move): name the destination with
--to, which sends every message there.

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
"too_long":[ids],"limit","moved_to":{QUEUE:N},"no_destination"} ("to" is
--to or the queue whose dead-letter queue DLQ is, "" when none or
several). Not available on Redis Cluster (the two queues are in different
slots, as for dead-letter policies).`,
		Example: `  chatq queue redrive jobs-dead
  chatq queue redrive jobs-dead --to jobs -n 100
  chatq queue redrive jobs-dead -o json
  chatq queue redrive bullmq:mail            # every failed job back to wait, as BullMQ's retryJobs
  chatq queue redrive asynq:default -n 100   # 100 archived tasks back to pending
  chatq queue redrive stream:orders/billing  # the group's dead letters back onto the stream`,
		Args: cmdutil.ExactArgs(1),
		RunE: cmdutil.RunWith(f, opts, runF, redriveRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.DLQ = args[0]
			opts.Client, opts.Cluster = queueClient(f, cmd), f.Config().Cluster
			if isKindAddress(opts.DLQ) {
				if opts.To != "" {
					return nil, cmdutil.WithHint(cmdutil.UsageErrorf("--to is for RSMQ queues"), "a queue of another kind redrives its dead jobs into itself, as its library does")
				}
				target := targetOf(f, cmd, args[0])
				return func(ctx context.Context) error { return kindRedrive(ctx, target, opts.N) }, nil
			}
			return nil, opts.validate()
		}),
	}
	cmd.Flags().StringVar(&opts.To, "to", "", "destination queue (default: the queue whose dead-letter queue is DLQ)")
	cmd.Flags().IntVarP(&opts.N, "count", "n", 0, "move at most N messages (default: as many as DLQ holds at the start)")
	// redrive: see partialRedrive for a reply lost after earlier calls
	return cmdutil.MarkWrite(cmd, "chatq queue stats DLQ")
}

type queueRedriveJSON struct {
	From            string   `json:"from"`
	To              string   `json:"to"`
	Moved           int      `json:"moved"`
	SkippedInFlight int      `json:"skipped_inflight"`
	Conflicts       []string `json:"conflicts"`
	TooLong         []string `json:"too_long"`
	Limit           int      `json:"limit"`
	// MovedTo counts the messages moved per destination; NoDestination
	// those left because none is known.
	MovedTo       map[string]int `json:"moved_to"`
	NoDestination int            `json:"no_destination"`
}

func (o *redriveOptions) validate() error {
	if o.N < 0 {
		return cmdutil.UsageErrorf("invalid -n %d: must be at least 1 (or 0 for all)", o.N)
	}
	if err := checkName(o.DLQ); err != nil {
		return err
	}
	if o.To != "" {
		if err := checkName(o.To); err != nil {
			return err
		}
		if o.To == o.DLQ {
			return cmdutil.WithHint(cmdutil.UsageErrorf("--to %s: a queue cannot be redriven into itself", o.To),
				"name the queue the messages came from, e.g. the one whose `chatq queue stats` shows dead_letter "+o.DLQ)
		}
	}
	if o.Cluster {
		return cmdutil.WithHint(cmdutil.UsageErrorf("redrive is not available on Redis Cluster: the two queues are in different slots"),
			"move messages with `chatq queue poll DLQ` and `chatq queue push QUEUE` (new ids), as dead-letter policies are refused on Cluster too")
	}
	return nil
}

func redriveRun(ctx context.Context, opts *redriveOptions) error {
	q, err := opts.Client()
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
	res, err := q.Redrive(ctx, opts.DLQ, delayq.RedriveOptions{To: opts.To, N: opts.N, Progress: func(moved, limit int) {
		if prog == nil {
			prog = opts.IO.NewProgress("redriving", limit)
		}
		prog.Add(moved - last)
		last = moved
	}})
	switch {
	case errors.Is(err, delayq.ErrInvalid) && opts.To == "":
		// The names and -n were checked: no queue or several have dlq as
		// their dead-letter queue (res.Sources).
		hint := fmt.Sprintf("name the destination: chatq queue redrive %s --to QUEUE", opts.DLQ)
		if len(res.Sources) == 0 {
			hint += " (no queue's dead-letter policy names it: see `chatq queue stats QUEUE`)"
		}
		return cmdutil.WithHint(err, hint)
	case err != nil && (res == nil || res.Moved == 0):
		return queueErr(err)
	case err != nil:
		return partialRedrive(ctx, opts, res, err)
	}
	if opts.JSON {
		if err := opts.IO.WriteJSON(redriveJSON(opts.DLQ, res)); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(opts.IO.Out, res.Moved)
	}
	infoTTY(opts.IO, opts.JSON, "moved %s from %s%s", plural(int64(res.Moved), "message"), opts.DLQ, destinations(res))
	if res.InFlight > 0 {
		opts.IO.Infof("left %s in flight in %s (a consumer holds them; a later redrive takes them)", plural(int64(res.InFlight), "message"), opts.DLQ)
	}
	to := cmp.Or(res.To, "its destination")
	if len(res.Exists) > 0 {
		opts.IO.Infof("left %s in %s whose id %s already has: %s", plural(int64(len(res.Exists)), "message"), opts.DLQ, to, strings.Join(res.Exists, " "))
	}
	if len(res.TooLong) > 0 {
		opts.IO.Infof("left %s in %s over %s's maxsize: %s", plural(int64(len(res.TooLong)), "message"), opts.DLQ, to, strings.Join(res.TooLong, " "))
	}
	if res.NoDestination > 0 {
		opts.IO.Infof("left %s in %s with no destination: no record of the queue they came from (or it is gone), and %s",
			plural(int64(res.NoDestination), "message"), opts.DLQ, sourcesSay(opts.DLQ, res.Sources))
	}
	if left := len(res.Exists) + len(res.TooLong) + res.NoDestination; left > 0 {
		var fix []string
		if len(res.Exists) > 0 {
			fix = append(fix, fmt.Sprintf("for an id in both, compare `chatq queue get %s ID` with `chatq queue get %s ID` and ack the copy you do not want", to, opts.DLQ))
		}
		if len(res.TooLong) > 0 {
			fix = append(fix, fmt.Sprintf("for a long body, raise the limit with `chatq queue set %s --maxsize N` (up to 65536, or -1 for unlimited)", to))
		}
		if res.NoDestination > 0 {
			fix = append(fix, fmt.Sprintf("for the others, name the destination: `chatq queue redrive %s --to QUEUE`", opts.DLQ))
		}
		return cmdutil.WithHint(fmt.Errorf("%s left in %s that cannot move", plural(int64(left), "message"), opts.DLQ),
			strings.Join(fix, "; ")+"; then redrive again")
	}
	switch {
	case res.Moved == 0:
		return cmdutil.ErrNothing
	}
	return nil
}

// destinations says where a redrive moved its messages: " to jobs", or
// " (2 to jobs, 1 to mail)".
func destinations(res *delayq.Redriven) string {
	switch len(res.MovedTo) {
	case 0:
		if res.To == "" {
			return ""
		}
		return " to " + res.To
	case 1:
		for q := range res.MovedTo {
			return " to " + q
		}
	}
	var parts []string
	for _, q := range slices.Sorted(maps.Keys(res.MovedTo)) {
		parts = append(parts, fmt.Sprintf("%d to %s", res.MovedTo[q], q))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// sourcesSay says why a dead-letter queue has no default destination.
func sourcesSay(dlq string, srcs []string) string {
	if len(srcs) == 0 {
		return fmt.Sprintf("no queue has %s as its dead-letter queue", dlq)
	}
	return fmt.Sprintf("%d queues have %s as their dead-letter queue (%s)", len(srcs), dlq, strings.Join(srcs, ", "))
}

func redriveJSON(dlq string, res *delayq.Redriven) queueRedriveJSON {
	out := queueRedriveJSON{From: dlq, To: res.To, Moved: res.Moved, SkippedInFlight: res.InFlight,
		Conflicts: res.Exists, TooLong: res.TooLong, Limit: res.Limit, MovedTo: res.MovedTo, NoDestination: res.NoDestination}
	if out.MovedTo == nil {
		out.MovedTo = map[string]int{}
	}
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
func partialRedrive(ctx context.Context, opts *redriveOptions, res *delayq.Redriven, err error) error {
	if opts.JSON {
		_ = opts.IO.WriteJSON(redriveJSON(opts.DLQ, res))
	}
	again := fmt.Sprintf("`chatq queue redrive %s`", opts.DLQ)
	if opts.To != "" {
		again = fmt.Sprintf("`chatq queue redrive %s --to %s`", opts.DLQ, opts.To)
	}
	if ctx.Err() != nil {
		opts.IO.Infof("moved %s%s before the interrupt; the rest is still in %s: continue with %s",
			plural(int64(res.Moved), "message"), destinations(res), opts.DLQ, again)
		return err
	}
	hint := fmt.Sprintf("%s moved%s before the error; the rest is still in %s: continue with %s",
		plural(int64(res.Moved), "message"), destinations(res), opts.DLQ, again)
	if conn.ReplyLost(err) {
		hint = fmt.Sprintf("%s moved%s before the last call, whose reply was lost: it may have moved up to 100 more (each message is in one queue or the other, never both); check with `chatq queue stats %s`, and continue with %s, which moves only what is still in %s",
			plural(int64(res.Moved), "message"), destinations(res), opts.DLQ, again, opts.DLQ)
	}
	return cmdutil.WithHint(queueErr(fmt.Errorf("after moving %d messages: %w", res.Moved, err)), hint)
}
