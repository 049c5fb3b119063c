// Package queue holds the `chatq queue` commands: thin wrappers that parse
// flags, call pkg/delayq and print.
package queue

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

const queueLong = `A delayed queue with visibility timeouts, stored in RSMQ's layout (the rsmq
npm package, 0.12.4), so chatq operates the queues Node services use.

A pushed message becomes due at once, after --delay, or --at a time; times
come from the Redis server's clock. poll receives due messages: each is
hidden for the visibility timeout (--vt) and comes back unless acked
(at-least-once); --pop deletes on receive (at-most-once). A dead-letter
policy (--max-receives N --dead-letter Q2) moves a message that was
received N times to Q2 instead of delivering it again; queue redrive Q2
moves such messages back.

Keys (with the global --prefix in front): <ns>:QUEUES, <ns>:<queue> and
<ns>:<queue>:Q, where <ns> is --namespace (env CHATQ_NAMESPACE, default
rsmq), RSMQ's "ns" option.

The queues other libraries keep on the same server are reached by the same
commands as KIND:NAME, as 'queue ls' lists them: BullMQ (bullmq:mail),
asynq (asynq:default) and Redis Streams consumer groups
(stream:orders/billing). ls, stats, peek, get, export, retry, redrive,
check, rm, pause, resume, recover and dead-letter take them; their states
map onto ready, delayed, inflight, retry, dead and done (docs/kinds.md).`

// NewCmd returns the `chatq queue` group; each command declares in its
// constructor whether it writes.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroupCmd("queue", "Delayed queue with visibility timeouts, stored in RSMQ's layout", queueLong)
	cmd.Example = `  chatq queue ls -l          # every queue of every kind
  chatq queue peek bullmq:mail --state dead
  chatq queue create jobs --vt 30s
  chatq queue push jobs --delay 10s 'resize image 42'
  chatq queue poll jobs --wait 30s -o json
  chatq queue work jobs --concurrency 4 -- ./handle.sh`
	cmd.PersistentFlags().String("namespace", "", "RSMQ namespace (rsmq's ns option) (env CHATQ_NAMESPACE, default rsmq)")
	cmd.AddCommand(
		NewCmdCreate(f, nil),
		NewCmdLs(f, nil),
		NewCmdStats(f, nil),
		NewCmdSet(f, nil),
		NewCmdDelete(f, nil),
		NewCmdPurge(f, nil),
		NewCmdPush(f, nil),
		NewCmdPoll(f, nil),
		NewCmdAck(f, nil),
		NewCmdRetry(f, nil),
		NewCmdPeek(f, nil),
		NewCmdWork(f, nil),
		NewCmdRedrive(f, nil),
		NewCmdGet(f, nil),
	)
	// Backup and restore (export.go, import.go).
	cmd.AddCommand(NewCmdExport(f, nil), NewCmdImport(f, nil))
	cmd.AddCommand(NewCmdCheck(f, nil))
	// The actions of other kinds (actions.go).
	cmd.AddCommand(NewCmdRm(f), NewCmdPause(f, false), NewCmdPause(f, true), NewCmdRecover(f), NewCmdDeadLetter(f))
	listQueues := func(ctx context.Context, f *cmdutil.Factory, cmd *cobra.Command) ([]string, error) {
		reg, err := kindsClient(f, cmd)()
		if err != nil {
			return nil, err
		}
		found, err := discover(ctx, reg, "")
		if err != nil {
			return nil, err
		}
		out := make([]string, len(found))
		for i, q := range found {
			out[i] = q.address
		}
		return out, nil
	}
	queueNames := f.CompleteFirstArg(listQueues)
	for _, sub := range cmd.Commands() {
		if sub.Name() != "ls" {
			sub.ValidArgsFunction = queueNames
		}
	}
	f.CompleteFlagValues(cmd, listQueues, "dead-letter", "to")
	return cmd
}

// queueClient returns the constructor of cmd's queue client: --namespace
// is read now; the namespace is checked, and the connection made, when it
// is called. On a cluster the queue names are hash-tagged.
func queueClient(f *cmdutil.Factory, cmd *cobra.Command) func() (*delayq.Client, error) {
	flag, _ := cmd.Flags().GetString("namespace")
	return func() (*delayq.Client, error) {
		ns, err := conn.Namespace(flag, f.Getenv)
		if err != nil {
			return nil, err
		}
		c, err := f.Client()
		if err != nil {
			return nil, err
		}
		return delayq.New(c, delayq.Options{Namespace: ns, Prefix: f.Prefix(), HashTag: f.Config().Cluster}), nil
	}
}

// listQueues returns the namespace's queue names, sorted, walking the
// registry in pages of 100 (SSCAN may return a name twice).
func listQueues(ctx context.Context, q *delayq.Client) ([]string, error) {
	seen := map[string]bool{}
	var cursor uint64
	for {
		page, next, err := q.Queues(ctx, cursor, "", 100)
		if err != nil {
			return nil, err
		}
		for _, n := range page {
			seen[n] = true
		}
		if cursor = next; cursor == 0 {
			return slices.Sorted(maps.Keys(seen)), nil
		}
	}
}

// queueErr adds the hints for the queue package's errors. Invalid input
// (delayq.ErrInvalid, which is names.ErrInvalid) already exits 2.
func queueErr(err error) error {
	name := "NAME"
	if qe := (*delayq.QueueError)(nil); errors.As(err, &qe) {
		name = qe.Queue
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, delayq.ErrQueueNotFound):
		return cmdutil.WithHint(err, fmt.Sprintf("create it with `chatq queue create %s`, or list queues with `chatq queue ls` (check --namespace and --prefix)", name))
	case errors.Is(err, delayq.ErrQueueExists):
		return cmdutil.WithHint(err, fmt.Sprintf("change it with `chatq queue set %s`, or delete it first with `chatq queue delete %s` (`--force` if it holds messages)", name, name))
	case errors.Is(err, delayq.ErrMessageTooLong):
		return cmdutil.WithHint(err, fmt.Sprintf("raise the queue's limit with `chatq queue set %s --maxsize N` (1024 to 65536, or -1 for unlimited)", name))
	case errors.Is(err, delayq.ErrStaleReceipt):
		return cmdutil.WithHint(err, "its visibility timeout ended and another receive took it, which now handles it; give a longer --vt, or use `chatq queue work`, which renews it while a job runs")
	case errors.Is(err, delayq.ErrMessageNotFound):
		return cmdutil.WithHint(err, "it was acked, popped, dead-lettered or redriven already, or the id is wrong (see `chatq queue peek`)")
	}
	return err
}

// orZero is a duration flag as a delayq option: 0 given is -1 there (0
// there means the default).
func orZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

// given is a flag's value when it was given, else nil.
func given[T any](fl *pflag.FlagSet, name string, v T) *T {
	if !fl.Changed(name) {
		return nil
	}
	return &v
}
