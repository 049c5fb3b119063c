package list

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/names"
	"github.com/spf13/cobra"
)

type listKeyOptions struct {
	*listOptions
	key string
}

func newListLenCmd(lo *listOptions) *cobra.Command {
	opts := &listKeyOptions{listOptions: lo}
	return &cobra.Command{
		Use:   "llen KEY",
		Short: "Print the number of items in a sharded list, as LLEN",
		Long: `Print the number of items in a sharded list: the lengths of its two end
shards plus the count kept for the shards between them, read in one atomic
script call whose cost does not grow with the list. A list that does not
exist has length 0.`,
		Example: `  chatq list llen jobs
  chatq list llen jobs -o json`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.key = args[0]
			return listLenRun(cmd.Context(), opts)
		},
	}
}

func listLenRun(ctx context.Context, opts *listKeyOptions) error {
	if err := names.ListKey(opts.key); err != nil {
		return err
	}
	c, err := opts.lists()
	if err != nil {
		return err
	}
	if err := opts.checkSize(ctx, c, opts.key); err != nil {
		return err
	}
	n, err := c.LLen(ctx, opts.key)
	if err != nil {
		return opts.listError(c, opts.key, err)
	}
	if n == 0 {
		if err := opts.plainList(ctx, opts.key); err != nil {
			return err
		}
	}
	if opts.f.JSON() {
		return opts.f.IO.WriteJSON(listLengthResult{Key: opts.key, Length: n})
	}
	_, err = fmt.Fprintln(opts.f.IO.Out, n)
	return err
}

type listRangeOptions struct {
	*listOptions
	key         string
	start, stop int64
}

func newListRangeCmd(lo *listOptions) *cobra.Command {
	opts := &listRangeOptions{listOptions: lo}
	cmd := &cobra.Command{
		Use:   "lrange KEY START STOP",
		Short: "Print the items from START to STOP of a sharded list, as LRANGE",
		Long: `Print the items from index START to STOP inclusive, one per line, as LRANGE:
0 is the head, negative indexes count from the tail (-1 is the last item).
-o json prints a JSON array of strings. An empty range prints nothing ([] with
-o json) and exits 0, or 3 with -e. A range is read in bounded script calls
(each walks at most 100 shards and returns at most 1000 items, so the server
is never held long), started over if the list is written in between, so the
result is still one state; a short range near either end is one call.

Flags go before KEY, so that negative indexes are not taken for flags.`,
		Example: `  chatq list lrange jobs 0 -1
  chatq -o json list lrange jobs -3 -1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 3 {
				return cmdutil.WithHint(cmdutil.UsageErrorf("accepts 3 arg(s), received %d", len(args)),
					"put flags before KEY: chatq -o json list lrange KEY START STOP")
			}
			return cmdutil.ExactArgs(3)(cmd, args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.key = args[0]
			var err error
			if opts.start, err = parseIndex("START", args[1]); err != nil {
				return err
			}
			if opts.stop, err = parseIndex("STOP", args[2]); err != nil {
				return err
			}
			return listRangeRun(cmd.Context(), opts)
		},
	}
	// Everything after KEY is an argument: -1 is an index, not a flag.
	cmd.Flags().SetInterspersed(false)
	return cmd
}

func parseIndex(name, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, cmdutil.UsageErrorf("invalid %s %q: want an integer index such as 0 or -1", name, s)
	}
	return n, nil
}

func listRangeRun(ctx context.Context, opts *listRangeOptions) error {
	if err := names.ListKey(opts.key); err != nil {
		return err
	}
	c, err := opts.lists()
	if err != nil {
		return err
	}
	if err := opts.checkSize(ctx, c, opts.key); err != nil {
		return err
	}
	items, err := c.LRange(ctx, opts.key, opts.start, opts.stop)
	if err != nil {
		return opts.listError(c, opts.key, err)
	}
	if len(items) == 0 {
		if err := opts.plainList(ctx, opts.key); err != nil {
			return err
		}
	}
	if err := opts.printItems(items); err != nil {
		return err
	}
	if len(items) == 0 {
		return cmdutil.ErrNothing // exit 3 with -e
	}
	return nil
}

func newListShardsCmd(lo *listOptions) *cobra.Command {
	opts := &listKeyOptions{listOptions: lo}
	return &cobra.Command{
		Use:   "shards KEY",
		Short: "Show how a sharded list is stored: endpoints and shard lengths",
		Long: `Show how a sharded list is stored: every shard from the first endpoint to the
last, with its number, Redis key, length, and which endpoint it is. On a
terminal this is a table; piped, tab-separated lines without the header;
-o json prints {"key","first","last","length","shards":[{"index","key","length"}],"mid","shard_size"},
where mid is the count kept for the shards strictly between the endpoints and
shard_size the size recorded by the first push (0 for a list written before
sizes were recorded). Read in calls of at most 100 shards each.`,
		Example: `  chatq list shards jobs
  chatq list shards jobs -o json`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.key = args[0]
			return listShardsRun(cmd.Context(), opts)
		},
	}
}

func listShardsRun(ctx context.Context, opts *listKeyOptions) error {
	if err := names.ListKey(opts.key); err != nil {
		return err
	}
	c, err := opts.lists()
	if err != nil {
		return err
	}
	if err := opts.checkSize(ctx, c, opts.key); err != nil {
		return err
	}
	lay, err := c.Layout(ctx, opts.key)
	if err != nil {
		return opts.listError(c, opts.key, err)
	}
	if lay.Length == 0 {
		if err := opts.plainList(ctx, opts.key); err != nil {
			return err
		}
	}
	if opts.f.JSON() {
		return opts.f.IO.WriteJSON(lay)
	}
	t := opts.f.IO.NewTable("SHARD", "KEY", "LENGTH", "END")
	for _, s := range lay.Shards {
		var ends []string
		if s.Index == lay.First {
			ends = append(ends, "first")
		}
		if s.Index == lay.Last {
			ends = append(ends, "last")
		}
		end := strings.Join(ends, ",")
		if end == "" {
			end = "-"
		}
		t.Row(s.Index, s.Key, s.Length, end)
	}
	return t.Flush()
}
