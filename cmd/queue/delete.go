package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

// deleteOptions are the options of delete and purge.
type deleteOptions struct {
	cmdutil.Output
	Client func() (*delayq.Client, error)
	Queue  string
	Force  bool
}

const guardLong = `A queue holding messages is not destroyed unasked: on a terminal chatq
asks first ("… holding 1,899 messages? [y/N]"); off a terminal (scripts, cron,
CI) it refuses with exit 2 unless --force. An empty queue needs neither. The
count is checked again inside the script that deletes, atomically: a message
pushed after chatq looked (or while you read the question) is never destroyed
unasked; if the queue grew meanwhile, chatq asks again with the new count.`

// NewCmdDelete returns `chatq queue delete` (runF: see cmdutil.RunWith).
func NewCmdDelete(f *cmdutil.Factory, runF func(context.Context, *deleteOptions) error) *cobra.Command {
	opts := &deleteOptions{}
	cmd := &cobra.Command{
		Use:   "delete QUEUE [--force]",
		Short: "Delete a queue and its messages (RSMQ deleteQueue)",
		Long: `Delete a queue and its messages (RSMQ deleteQueue): its keys are UNLINKed in
one script (O(1) in the server's main thread), then its name leaves the
registry.

` + guardLong + `

A queue that another queue names as its dead-letter queue is not deleted
(exit 2, naming those queues) unless --force: their policies would turn off
(receives then deliver such messages again instead of moving them; nothing
is lost). With --force it is deleted and chatq says which queues now point
nowhere (dead_letter_of in JSON).

Declining the question exits 2; nothing was changed.`,
		Example: `  chatq queue delete jobs              # asks on a terminal if jobs holds messages
  chatq queue delete jobs --force      # in scripts: delete it whatever it holds
  chatq queue delete old-dlq --force -o json`,
		Args: cmdutil.ExactArgs(1),
		RunE: cmdutil.RunWith(f, opts, runF, deleteRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue = args[0]
			opts.Client = queueClient(f, cmd)
			return nil, opts.validate()
		}),
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "delete without asking, even a queue holding messages or named as another queue's dead-letter queue")
	return cmdutil.MarkWrite(cmd, "chatq queue ls")
}

func (o *deleteOptions) validate() error { return checkName(o.Queue) }

type queueDeleteJSON struct {
	Deleted string `json:"deleted"`
	// Messages is how many messages the queue held.
	Messages int64 `json:"messages"`
	// DeadLetterOf are the queues that named it as their dead-letter
	// queue (only with --force): their policies now point nowhere.
	DeadLetterOf []string `json:"dead_letter_of"`
}

func deleteRun(ctx context.Context, opts *deleteOptions) error {
	q, err := opts.Client()
	if err != nil {
		return err
	}
	sources, err := q.DeadLetterSources(ctx, opts.Queue)
	if err != nil {
		return queueErr(err)
	}
	if len(sources) > 0 && !opts.Force {
		// A missing queue is "not found" (exit 1), whoever names it.
		if _, err := q.Stats(ctx, opts.Queue); err == nil {
			return cmdutil.WithHint(
				cmdutil.Refusedf("queue %s is the dead-letter queue of %s: not deleted", opts.Queue, strings.Join(sources, ", ")),
				fmt.Sprintf("pass --force to delete it anyway (their policies turn off), or first drop each policy with `chatq queue set %s --max-receives 0 --dead-letter ''`", sources[0]))
		} else if !errors.Is(err, delayq.ErrQueueNotFound) {
			return queueErr(err)
		}
	}
	n, err := guarded(ctx, opts.IO, opts.Queue, opts.Force, "not deleted",
		func(held int64) string {
			return fmt.Sprintf("delete queue %s holding %s?", opts.Queue, messages(held))
		},
		func(most int64) (int64, error) { return q.Delete(ctx, opts.Queue, most) })
	if err != nil {
		return err
	}
	infoTTY(opts.IO, opts.JSON, "deleted queue %s and its %s", opts.Queue, messages(n))
	if len(sources) > 0 {
		opts.IO.Infof("warning: %s named %s as dead-letter queue, which no longer exists: their policies are off (messages received too often are delivered again, not moved) until it is created again", strings.Join(sources, ", "), opts.Queue)
	}
	if opts.JSON {
		return opts.IO.WriteJSON(queueDeleteJSON{Deleted: opts.Queue, Messages: n, DeadLetterOf: append([]string{}, sources...)})
	}
	return nil
}

// guarded runs destroy, which deletes at most a number of messages of
// queue (or any with -1) and fails with delayq.ErrQueueNotEmpty, returning
// how many it holds, when there are more: first allowing none (or any,
// with --force); when the queue holds messages it asks on a terminal, with
// question(count), and runs destroy again allowing that many; off a
// terminal it refuses (exit 2).
func guarded(ctx context.Context, ios *iostreams.IOStreams, queue string, force bool, refused string, question func(int64) string, destroy func(most int64) (int64, error)) (int64, error) {
	most := int64(0)
	if force {
		most = -1
	}
	for {
		n, err := destroy(most)
		if !errors.Is(err, delayq.ErrQueueNotEmpty) {
			return n, queueErr(err)
		}
		if !ios.CanPrompt() {
			return 0, cmdutil.WithHint(
				cmdutil.Refusedf("queue %s holds %s: %s (not on a terminal, so nobody could be asked)", queue, messages(n), refused),
				"pass --force to destroy its messages without asking")
		}
		yes, err := ios.Confirm(ctx, question(n))
		if err != nil {
			return 0, err
		}
		if !yes {
			return 0, cmdutil.Refusedf("queue %s: %s", queue, refused)
		}
		most = n
	}
}

// messages renders a count of messages for people: "1 message",
// "1,899 messages".
func messages(n int64) string {
	if n == 1 {
		return "1 message"
	}
	return iostreams.Count(n) + " messages"
}

// NewCmdPurge returns `chatq queue purge` (runF: see cmdutil.RunWith).
func NewCmdPurge(f *cmdutil.Factory, runF func(context.Context, *deleteOptions) error) *cobra.Command {
	opts := &deleteOptions{}
	cmd := &cobra.Command{
		Use:   "purge QUEUE [--force]",
		Short: "Delete every message of a queue, keeping the queue; prints how many",
		Long: `Delete every message of a queue, keeping the queue, its attributes and its
counters; prints how many were deleted. One atomic script, O(1) in the
server's main thread whatever the queue holds; a push after it is kept.

A queue of another kind is purged as its library purges it, where it has
a purge: celery:QUEUE as ` + "`celery purge`" + ` does (its priority lists are
deleted; messages workers hold are left). Other kinds have no purge.

` + guardLong + `

Declining the question exits 2; nothing was changed.`,
		Example: `  chatq queue purge jobs              # asks on a terminal if jobs holds messages
  chatq queue purge jobs --force      # in scripts
  chatq queue purge jobs --force -o json
  chatq queue purge celery:emails --force`,
		Args: cmdutil.ExactArgs(1),
		RunE: cmdutil.RunWith(f, opts, runF, purgeRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue = args[0]
			opts.Client = queueClient(f, cmd)
			if isKindAddress(opts.Queue) && runF == nil {
				target := targetOf(f, cmd, opts.Queue)
				return func(ctx context.Context) error { return kindPurge(ctx, target, opts.Force) }, nil
			}
			return nil, opts.validate()
		}),
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "purge without asking, whatever the queue holds")
	return cmdutil.MarkWrite(cmd, "chatq queue stats QUEUE")
}

type queuePurgeJSON struct {
	Purged int64 `json:"purged"`
}

func purgeRun(ctx context.Context, opts *deleteOptions) error {
	q, err := opts.Client()
	if err != nil {
		return err
	}
	n, err := guarded(ctx, opts.IO, opts.Queue, opts.Force, "not purged", purgeQuestion(opts.Queue),
		func(most int64) (int64, error) { return q.Purge(ctx, opts.Queue, most) })
	if err != nil {
		return err
	}
	return purged(opts.IO, opts.JSON, n)
}

func purgeQuestion(queue string) func(int64) string {
	return func(held int64) string {
		return fmt.Sprintf("purge queue %s, deleting its %s?", queue, messages(held))
	}
}

func purged(ios *iostreams.IOStreams, asJSON bool, n int64) error {
	if asJSON {
		return ios.WriteJSON(queuePurgeJSON{n})
	}
	fmt.Fprintln(ios.Out, n)
	return nil
}
