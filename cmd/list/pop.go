package list

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/names"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/spf13/cobra"
)

type listPopOptions struct {
	*listOptions
	side  shardlist.Side
	key   string
	count int
}

func newListPopCmd(lo *listOptions, side shardlist.Side) *cobra.Command {
	opts := &listPopOptions{listOptions: lo, side: side}
	name := sideName(side) + "pop"
	end := map[shardlist.Side]string{shardlist.Left: "head", shardlist.Right: "tail"}[side]
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
	l, err := opts.list(opts.key)
	if err != nil {
		return err
	}
	items, err := l.Pop(ctx, opts.side, opts.count)
	if err != nil && !errors.Is(err, shardlist.ErrEmpty) {
		return err
	}
	if perr := opts.printItems(items); perr != nil {
		return perr
	}
	return popResult(err)
}

type listBPopOptions struct {
	*listOptions
	side    shardlist.Side
	key     string
	timeout time.Duration
}

func newListBPopCmd(lo *listOptions, side shardlist.Side) *cobra.Command {
	opts := &listBPopOptions{listOptions: lo, side: side}
	name := "b" + sideName(side) + "pop"
	end := map[shardlist.Side]string{shardlist.Left: "head", shardlist.Right: "tail"}[side]
	cmd := &cobra.Command{
		Use:   name + " KEY",
		Short: "Pop the " + end + " item of a sharded list, waiting for one, as " + strings.ToUpper(name),
		Long: `Pop the ` + end + ` item of a sharded list, waiting up to --timeout for one to
be pushed (0 waits until interrupted; fractions of a second are honoured).
The item is printed followed by a newline; -o json prints a JSON array of one
string. When the wait ends with nothing it prints nothing ([] with -o json)
and exits 0, or 3 with -e.

Here --timeout is the wait; the connection timeout then comes from
CHATQ_TIMEOUT or the config file.`,
		Example: fmt.Sprintf(`  chatq list %[1]s jobs --timeout 5s
  chatq list %[1]s jobs --timeout 250ms -o json
  chatq list %[1]s jobs --timeout 0   # wait until an item comes`, name),
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.key = args[0]
			return listBPopRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().DurationVar(&opts.timeout, "timeout", 0, "how long to wait for an item, such as 5s or 250ms; 0 waits forever")
	return cmd
}

func listBPopRun(ctx context.Context, opts *listBPopOptions) error {
	if err := names.ListKey(opts.key); err != nil {
		return err
	}
	if opts.timeout < 0 {
		return cmdutil.UsageErrorf("invalid --timeout %s: must not be negative", opts.timeout)
	}
	l, err := opts.list(opts.key)
	if err != nil {
		return err
	}
	item, err := l.BPop(ctx, opts.side, opts.timeout)
	var items []string
	switch {
	case err == nil:
		items = []string{item}
	case !errors.Is(err, shardlist.ErrEmpty):
		return err
	}
	if perr := opts.printItems(items); perr != nil {
		return perr
	}
	return popResult(err)
}
