package list

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/names"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/spf13/cobra"
)

type listPopOptions struct {
	*listOptions
	side  side
	key   string
	count int
}

func newListPopCmd(lo *listOptions, s side) *cobra.Command {
	opts := &listPopOptions{listOptions: lo, side: s}
	name := s.name() + "pop"
	end := s.String()
	cmd := &cobra.Command{
		Use:   name + " KEY",
		Short: "Pop items from the " + end + " of a sharded list, as " + strings.ToUpper(name),
		Long: `Pop up to COUNT items from the ` + end + ` of a sharded list, in one atomic
script call, in the order ` + strings.ToUpper(name) + ` KEY COUNT returns them on a plain
list. Each item is printed followed by a newline; -o json prints a JSON array
of strings. An empty list prints nothing ([] with -o json) and exits 0, or 3
with -e.`,
		Example: fmt.Sprintf(`  chatq list %[1]s jobs
  chatq list %[1]s jobs -n 10 -o json
  chatq -e list %[1]s jobs || echo empty`, name),
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.key = args[0]
			return listPopRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVarP(&opts.count, "count", "n", 1, "pop up to this many items")
	return cmd
}

func listPopRun(ctx context.Context, opts *listPopOptions) error {
	if err := names.ListKey(opts.key); err != nil {
		return err
	}
	if opts.count < 1 {
		return cmdutil.UsageErrorf("invalid --count %d: must be at least 1", opts.count)
	}
	c, err := opts.lists()
	if err != nil {
		return err
	}
	if err := opts.checkSize(ctx, c, opts.key); err != nil {
		return err
	}
	pop := c.LPop
	if opts.side == tail {
		pop = c.RPop
	}
	// Items popped before an error (a pop of more than 1000 items takes
	// several calls) are out of the list: print them all the same.
	items, err := pop(ctx, opts.key, opts.count)
	if perr := opts.printItems(items); perr != nil {
		return perr
	}
	if err != nil && !errors.Is(err, shardlist.ErrEmpty) {
		return opts.listError(c, opts.key, err)
	}
	return popResult(err)
}

type listBPopOptions struct {
	*listOptions
	side side
	key  string
	wait time.Duration
	// giveUpAfter ends the reconnecting after the server was away this long.
	giveUpAfter time.Duration
}

func newListBPopCmd(lo *listOptions, s side) *cobra.Command {
	opts := &listBPopOptions{listOptions: lo, side: s}
	name := "b" + s.name() + "pop"
	end := s.String()
	cmd := &cobra.Command{
		Use:   name + " KEY",
		Short: "Pop the " + end + " item of a sharded list, waiting for one, as " + strings.ToUpper(name),
		Long: `Pop the ` + end + ` item of a sharded list, waiting up to --wait for one to
be pushed (0, the default, waits until interrupted; fractions of a second are
honoured). The item is printed followed by a newline; -o json prints a JSON
array of one string. When the wait ends with nothing it prints nothing ([]
with -o json) and exits 0, or 3 with -e. Ctrl-C ends the wait at once (exit
130) and takes nothing.

The global --timeout is the connection timeout, as for every command (before
--wait existed it was also the wait here).

When the server goes away (a restart, a failover), the wait says so once on
stderr, reconnects with capped backoff and goes on until --wait's deadline.
A pop whose reply was lost is not retried, since its item may already be
gone: that exits 4 (see chatq --help). --give-up-after ends the
reconnecting.`,
		Example: fmt.Sprintf(`  chatq list %[1]s jobs --wait 5s
  chatq list %[1]s jobs --wait 250ms -o json
  chatq list %[1]s jobs                # wait until an item comes`, name),
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.key = args[0]
			return listBPopRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.wait, "wait", 0, "how long to wait for an item, such as 5s or 250ms; 0 waits forever")
	cmd.Flags().DurationVar(&opts.giveUpAfter, "give-up-after", 0, "exit 1 when the server has been unreachable this long (0: keep reconnecting until --wait ends)")
	return cmd
}

func listBPopRun(ctx context.Context, opts *listBPopOptions) error {
	if err := names.ListKey(opts.key); err != nil {
		return err
	}
	if opts.wait < 0 {
		return cmdutil.UsageErrorf("invalid --wait %s: must not be negative", opts.wait)
	}
	c, err := opts.lists()
	if err != nil {
		return err
	}
	if err := opts.checkSize(ctx, c, opts.key); err != nil {
		return err
	}
	bpop := c.BLPop
	if opts.side == tail {
		bpop = c.BRPop
	}
	// The item is printed as soon as the pop returns, in one write: see
	// "Blocking pops" in docs/shardlist.md for what a kill can still lose.
	// Through a restart or failover the wait goes on (until --wait's
	// deadline); a pop whose reply was lost is not retried, since its item
	// may be gone: that exits 4.
	var deadline time.Time
	if opts.wait > 0 {
		deadline = time.Now().Add(opts.wait)
	}
	var item string
	var popped bool
	p := opts.f.Persistent(opts.giveUpAfter)
	p.Retryable = func(err error) bool {
		return !conn.ReplyLost(err) || errors.Is(err, shardlist.ErrWait)
	}
	err = p.Run(ctx, func(ctx context.Context) error {
		wait := opts.wait
		if !deadline.IsZero() {
			if wait = time.Until(deadline); wait <= 0 {
				return shardlist.ErrEmpty
			}
		}
		var err error
		item, err = bpop(ctx, opts.key, wait)
		popped = err == nil
		if err == nil || errors.Is(err, shardlist.ErrEmpty) {
			p.Healthy()
		}
		return err
	})
	if popped {
		// Printed even when interrupted meanwhile: the pop took it.
		return opts.printItems([]string{item})
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !errors.Is(err, shardlist.ErrEmpty) {
		return opts.listError(c, opts.key, err)
	}
	if perr := opts.printItems(nil); perr != nil {
		return perr
	}
	return popResult(err)
}
