package list

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/names"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/spf13/cobra"
)

type listPushOptions struct {
	*listOptions
	side  shardlist.Side
	key   string
	items []string
	stdin bool
}

func newListPushCmd(lo *listOptions, side shardlist.Side) *cobra.Command {
	opts := &listPushOptions{listOptions: lo, side: side}
	name := sideName(side) + "push"
	end := map[shardlist.Side]string{shardlist.Left: "head", shardlist.Right: "tail"}[side]
	return &cobra.Command{
		Use:   name + " KEY ITEM...|-",
		Short: "Push items onto the " + end + " of a sharded list, as " + strings.ToUpper(name),
		Long: `Push items onto the ` + end + ` of a sharded list and print its new length. The
items end up in the order ` + strings.ToUpper(name) + ` would leave them on a plain list.

With - as the only item, items are read from stdin, one per line, and pushed in
batches of 500 per script call; each batch is atomic, the whole push is not.`,
		Example: fmt.Sprintf(`  chatq list %[1]s jobs a b c
  printf 'x\ny\n' | chatq list %[1]s jobs -
  chatq list %[1]s jobs a -o json`, name),
		Args: cmdutil.MinArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.key = args[0]
			opts.items = args[1:]
			opts.stdin = len(opts.items) == 1 && opts.items[0] == "-"
			return listPushRun(cmd.Context(), opts)
		},
	}
}

type listLengthResult struct {
	Key    string `json:"key"`
	Length int64  `json:"length"`
}

func listPushRun(ctx context.Context, opts *listPushOptions) error {
	if err := names.ListKey(opts.key); err != nil {
		return err
	}
	items := opts.items
	if opts.stdin {
		var err error
		opts.f.IO.NoteStdin("items, one per line,")
		if items, err = cmdutil.ReadLines(opts.f.IO.In); err != nil {
			return fmt.Errorf("read items from stdin: %w", err)
		}
	}
	for i, it := range items {
		if it == shardlist.WakeMarker {
			return cmdutil.UsageErrorf("item %d is chatq's reserved wake-up marker", i+1)
		}
	}
	l, err := opts.list(opts.key)
	if err != nil {
		return err
	}
	n, err := pushInChunks(ctx, l, opts.side, items, opts.f.NewProgress("pushing", len(items)))
	if errors.Is(err, shardlist.ErrReserved) {
		return cmdutil.UsageErr(err)
	}
	if err != nil {
		return err
	}
	if opts.f.JSON() {
		return opts.f.WriteJSON(listLengthResult{Key: opts.key, Length: n})
	}
	_, err = fmt.Fprintln(opts.f.IO.Out, n)
	return err
}

// pushInChunks pushes items a chunk at a time so that a long push can show
// its progress; each chunk is still sent in the package's batches.
func pushInChunks(ctx context.Context, l *shardlist.List, side shardlist.Side, items []string, p *cmdutil.Progress) (int64, error) {
	const chunk = 5000
	defer p.Done()
	for start := 0; ; start += chunk {
		end := min(start+chunk, len(items))
		n, err := l.Push(ctx, side, items[start:end])
		if err != nil {
			return 0, err
		}
		p.Add(end - start)
		if end == len(items) {
			return n, nil
		}
	}
}
