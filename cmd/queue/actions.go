package queue

import (
	"context"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/queuekinds"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/spf13/cobra"
)

// The actions that queues of other kinds than RSMQ's have (pkg/queues):
// rm, pause, resume, recover and dead-letter. Each does what the queue's
// library does for it, in one atomic step per job or batch that checks the
// job's state first; a kind without the operation is a usage error.

// kindOnly refuses an RSMQ queue for an action only other kinds have.
func kindOnly(address, action, hint string) error {
	if isKindAddress(address) {
		return nil
	}
	if kind, _ := queues.Parse(address); kind != "rsmq" {
		return cmdutil.WithHint(cmdutil.UsageErrorf("queue %q: %v %q", address, queues.ErrUnknownKind, kind),
			"a queue is NAME (RSMQ's) or KIND:NAME with KIND one of "+strings.Join(queuekinds.Names[1:], ", ")+", as `chatq queue ls` prints it")
	}
	return cmdutil.WithHint(cmdutil.UsageErrorf("rsmq queues have no %s", action), hint)
}

type rmOptions struct {
	Target kindTarget
	IDs    []string
	Force  bool
}

// NewCmdRm returns `chatq queue rm`.
func NewCmdRm(f *cmdutil.Factory) *cobra.Command {
	opts := &rmOptions{}
	cmd := &cobra.Command{
		Use:   "rm KIND:NAME ID... [--force]",
		Short: "Remove jobs by id from a BullMQ, asynq or stream queue",
		Long: `Remove jobs by id, from whatever state they are in, as the queue's library
removes them (BullMQ's Job.remove, asynq's DeleteTask, XACK and XDEL of a
stream entry), each in one atomic step that checks its state first.

A job in flight (BullMQ's active, asynq's active, a stream entry pending
to a consumer) is left, unless --force: its worker may still finish it.
Jobs left or not found are listed on stderr and make rm exit 1; the
others are removed all the same.

For RSMQ queues, 'chatq queue ack QUEUE ID' deletes a message by id (RSMQ's
deleteMessage).`,
		Example: `  chatq queue rm bullmq:mail 42 43
  chatq queue peek asynq:default --state dead --grep '"user":7' --jq '.[].id' | xargs chatq queue rm asynq:default
  chatq queue rm stream:orders/billing 1718000000000-0 --force`,
		Args: cmdutil.MinArgs(2),
		RunE: cmdutil.RunWith(f, opts, nil, rmRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			if err := kindOnly(args[0], "rm", "delete a message by id with `chatq queue ack "+args[0]+" ID`"); err != nil {
				return nil, err
			}
			opts.Target = *targetOf(f, cmd, args[0])
			opts.IDs = args[1:]
			return nil, nil
		}),
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "also remove jobs in flight (their worker may still be running them)")
	return cmdutil.MarkWrite(cmd, "chatq queue peek QUEUE")
}

func rmRun(ctx context.Context, opts *rmOptions) error {
	q, err := opts.Target.open()
	if err != nil {
		return err
	}
	a, err := capability[queues.Remover](q, "rm")
	if err != nil {
		return err
	}
	r, err := a.Remove(ctx, opts.IDs, opts.Force)
	if err != nil {
		return kindErr(err, opts.Target.Address)
	}
	return opts.Target.report("rm", r, len(opts.IDs))
}

// NewCmdPause returns `chatq queue pause` (resume: false) or `chatq queue
// resume` (true).
func NewCmdPause(f *cmdutil.Factory, resume bool) *cobra.Command {
	verb, short := "pause", "Pause a BullMQ or asynq queue: its workers take no new jobs"
	long := `Pause a queue as its library does (BullMQ's Queue.pause, asynq's
Inspector.PauseQueue): workers finish the jobs they hold and take no new
ones until 'chatq queue resume'. Jobs can still be added. queue ls -l and
stats show paused.`
	if resume {
		verb, short = "resume", "Resume a paused BullMQ or asynq queue"
		long = `Resume a paused queue as its library does (BullMQ's Queue.resume, asynq's
Inspector.UnpauseQueue): its workers take jobs again. Resuming a queue
that is not paused changes nothing.`
	}
	target := &kindTarget{}
	cmd := &cobra.Command{
		Use:     verb + " KIND:NAME",
		Short:   short,
		Long:    long,
		Example: "  chatq queue " + verb + " bullmq:mail\n  chatq queue " + verb + " asynq:critical -o json",
		Args:    cmdutil.ExactArgs(1),
		RunE: cmdutil.RunWith(f, target, nil, func(ctx context.Context, target *kindTarget) error {
			q, err := target.open()
			if err != nil {
				return err
			}
			a, err := capability[queues.Pauser](q, verb)
			if err != nil {
				return err
			}
			if resume {
				err = a.Resume(ctx)
			} else {
				err = a.Pause(ctx)
			}
			if err != nil {
				return kindErr(err, target.Address)
			}
			if target.JSON {
				return target.IO.WriteJSON(map[string]any{"queue": target.Address, "paused": !resume})
			}
			infoTTY(target.IO, false, "%s: %s", verb+"d", target.Address)
			return nil
		}, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			*target = *targetOf(f, cmd, args[0])
			return nil, kindOnly(args[0], verb, "RSMQ has no pausing: stop the queue's consumers instead")
		}),
	}
	return cmdutil.MarkWrite(cmd, "chatq queue stats QUEUE")
}

type recoverOptions struct {
	Target   kindTarget
	IDs      []string
	IdleFor  time.Duration
	Consumer string
	N        int
}

// NewCmdRecover returns `chatq queue recover`.
func NewCmdRecover(f *cmdutil.Factory) *cobra.Command {
	opts := &recoverOptions{}
	cmd := &cobra.Command{
		Use:   "recover KIND:NAME [ID...] [--idle DUR --consumer NAME] [-n N]",
		Short: "Move jobs whose worker is gone back to be taken again (stalled, lease expired, idle stream entries)",
		Long: `Move in-flight jobs whose worker is gone back to be taken again, as the
queue's library does on its own schedule:

  bullmq  active jobs whose lock expired go back to wait (a job that
          stalled more than its maxStalledCount fails), as BullMQ's stalled
          check (moveStalledJobsToWait)
  asynq   active tasks whose lease expired go to retry (or archived when
          their retries are used up), as asynq's recoverer
  stream  pending entries idle at least --idle are claimed for --consumer
          (XAUTOCLAIM; with ids, XCLAIM of those), which then reads them
          from its own pending list
  celery  unacked messages older than the visibility timeout (--idle,
          default kombu's 1h: give the app's visibility_timeout) go back
          onto their queue, as kombu's restore_visible

Only jobs the library itself would recover are moved; a job whose worker
still holds it is left. -n N recovers at most N; the work goes in bounded
batches. 'chatq queue peek QUEUE --state inflight' shows them first.`,
		Example: `  chatq queue recover bullmq:mail
  chatq queue recover asynq:default -o json
  chatq queue recover stream:orders/billing --idle 10m --consumer rescuer
  chatq queue peek stream:orders/billing --inflight-for 10m`,
		Args: cmdutil.MinArgs(1),
		RunE: cmdutil.RunWith(f, opts, nil, recoverRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			if err := kindOnly(args[0], "recover", "an RSMQ message comes back by itself when its visibility timeout ends; `chatq queue retry "+args[0]+" --inflight-for DUR` releases it sooner"); err != nil {
				return nil, err
			}
			kind, _ := queues.Parse(args[0])
			switch {
			case kind == "stream" && (opts.IdleFor <= 0 || opts.Consumer == ""):
				return nil, cmdutil.WithHint(cmdutil.UsageErrorf("a stream's entries are claimed for a consumer: give --idle DUR and --consumer NAME"),
					"e.g. chatq queue recover "+args[0]+" --idle 10m --consumer rescuer")
			case kind == "celery" && opts.Consumer != "":
				return nil, cmdutil.UsageErrorf("--consumer is for streams: celery restores its messages onto their queue")
			case kind != "stream" && kind != "celery" && (opts.IdleFor != 0 || opts.Consumer != ""):
				return nil, cmdutil.WithHint(cmdutil.UsageErrorf("--idle and --consumer are for streams (and --idle for celery)"), "bullmq and asynq recover by their own lock or lease")
			case opts.IdleFor < 0:
				return nil, cmdutil.UsageErrorf("invalid --idle %s: must be positive", opts.IdleFor)
			}
			if opts.N < 0 {
				return nil, cmdutil.UsageErrorf("invalid -n %d: must not be negative", opts.N)
			}
			opts.Target = *targetOf(f, cmd, args[0])
			opts.IDs = args[1:]
			return nil, nil
		}),
	}
	cmd.Flags().DurationVar(&opts.IdleFor, "idle", 0, "streams: claim entries idle at least this long (e.g. 10m); celery: the visibility timeout")
	cmd.Flags().StringVar(&opts.Consumer, "consumer", "", "streams: the consumer that claims them")
	cmd.Flags().IntVarP(&opts.N, "count", "n", 0, "recover at most N jobs (0: all)")
	return cmdutil.MarkWrite(cmd, "chatq queue peek QUEUE --state inflight")
}

func recoverRun(ctx context.Context, opts *recoverOptions) error {
	q, err := opts.Target.open()
	if err != nil {
		return err
	}
	a, err := capability[queues.Recoverer](q, "recover")
	if err != nil {
		return err
	}
	r, err := a.Recover(ctx, queues.RecoverOptions{IDs: opts.IDs, IdleFor: opts.IdleFor, Consumer: opts.Consumer, Max: opts.N})
	if err != nil {
		return kindErr(err, opts.Target.Address)
	}
	return opts.Target.report("recover", r, len(opts.IDs))
}

type deadLetterOptions struct {
	Target      kindTarget
	MinReceives int64
	To          string
	N           int
}

// NewCmdDeadLetter returns `chatq queue dead-letter`.
func NewCmdDeadLetter(f *cmdutil.Factory) *cobra.Command {
	opts := &deadLetterOptions{}
	cmd := &cobra.Command{
		Use:   "dead-letter stream:KEY/GROUP --min-receives N [--to KEY] [-n N]",
		Short: "Move a stream group's entries delivered N times or more to a dead-letter stream",
		Long: `Move the entries of a consumer group's pending list that were delivered
--min-receives times or more to a dead-letter stream, keeping where they
came from: each is added there with its fields and the origin stream,
group, id, delivery count and time, then acked in the group (never
deleted from the stream: its other groups still read it). 'chatq queue
redrive' puts them back; 'peek --state dead' shows them.

Redis has no dead letters for consumer groups: this is the one a team
would write, done in bounded batches that re-check each entry's delivery
count before moving it. See docs/kinds/stream.md for the default
dead-letter stream's key.`,
		Example: `  chatq queue dead-letter stream:orders/billing --min-receives 5
  chatq queue dead-letter stream:orders/billing --min-receives 3 --to orders:dead -o json`,
		Args: cmdutil.ExactArgs(1),
		RunE: cmdutil.RunWith(f, opts, nil, deadLetterRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			if err := kindOnly(args[0], "dead-letter", "give the queue a dead-letter policy: `chatq queue set "+args[0]+" --max-receives N --dead-letter DLQ`"); err != nil {
				return nil, err
			}
			if opts.MinReceives < 1 {
				return nil, cmdutil.WithHint(cmdutil.UsageErrorf("give --min-receives N (at least 1)"), "peek --min-receives N shows the entries first")
			}
			opts.Target = *targetOf(f, cmd, args[0])
			return nil, nil
		}),
	}
	cmd.Flags().Int64Var(&opts.MinReceives, "min-receives", 0, "entries delivered at least N times")
	cmd.Flags().StringVar(&opts.To, "to", "", "the dead-letter stream's key (default: the kind's, see docs/kinds/stream.md)")
	cmd.Flags().IntVarP(&opts.N, "count", "n", 0, "move at most N entries (0: all)")
	return cmdutil.MarkWrite(cmd, "chatq queue peek QUEUE --state dead")
}

func deadLetterRun(ctx context.Context, opts *deadLetterOptions) error {
	q, err := opts.Target.open()
	if err != nil {
		return err
	}
	a, err := capability[queues.DeadLetterer](q, "dead-letter")
	if err != nil {
		return err
	}
	r, err := a.DeadLetter(ctx, queues.DeadLetterOptions{MinAttempts: opts.MinReceives, To: opts.To, Max: opts.N})
	if err != nil {
		return kindErr(err, opts.Target.Address)
	}
	return opts.Target.report("dead-letter", r, 0)
}
