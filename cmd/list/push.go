package list

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/internal/names"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/spf13/cobra"
)

type pushOptions struct {
	listOptions
	Side  side
	Key   string
	Items []string
	// Stdin is whether the items are read from stdin (- as the only item).
	Stdin bool
}

// NewCmdPush returns `chatq list lpush` (head) or `rpush` (tail). runF,
// when set (tests), replaces the run function and gets the options once
// they are parsed and validated.
func NewCmdPush(f *cmdutil.Factory, s side, runF func(context.Context, *pushOptions) error) *cobra.Command {
	opts := &pushOptions{Side: s}
	name := s.name() + "push"
	end := s.String()
	cmd := &cobra.Command{
		Use:   name + " KEY ITEM...|-",
		Short: "Push items onto the " + end + " of a sharded list, as " + strings.ToUpper(name),
		Long: `Push items onto the ` + end + ` of a sharded list and print its new length. The
items end up in the order ` + strings.ToUpper(name) + ` would leave them on a plain list.

With - as the only item, items are read from stdin, one per line, and pushed in
batches of 500 per script call; each batch is atomic, the whole push is not.
When a batch fails after others were stored, chatq says how many items are in
the list and how to resume without duplicates. Items must be valid UTF-8.

Items that start with - go after --, or they are taken for flags.`,
		Example: fmt.Sprintf(`  chatq list %[1]s jobs a b c
  printf 'x\ny\n' | chatq list %[1]s jobs -
  chatq list %[1]s jobs a -o json
  chatq list %[1]s jobs -- -1 -2   # items that start with -`, name),
		Args: cmdutil.MinArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.listOptions = newListOptions(f, cmd)
			opts.Key, opts.Items = args[0], args[1:]
			opts.Stdin = len(opts.Items) == 1 && opts.Items[0] == "-"
			if err := opts.validate(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return pushRun(cmd.Context(), opts)
		},
	}
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if strings.HasPrefix(err.Error(), "unknown shorthand flag") || strings.HasPrefix(err.Error(), "unknown flag") {
			return cmdutil.WithHint(cmdutil.UsageErr(err),
				fmt.Sprintf("items that start with - go after --: chatq list %s KEY -- -1", name))
		}
		return cmdutil.UsageErr(err)
	})
	return cmdutil.MarkWrite(cmd, "chatq list lrange KEY 0 -1")
}

// validate checks KEY, the items given as arguments and --shard-size;
// items read from stdin are checked by the run once read.
func (o *pushOptions) validate() error {
	if err := names.ListKey(o.Key); err != nil {
		return err
	}
	if !o.Stdin {
		if err := checkItems(o.Items, "item"); err != nil {
			return err
		}
	}
	return o.validateShardSize()
}

// checkItems refuses the wake-up marker and items that are not valid UTF-8,
// saying which one (what: "item" or "line").
func checkItems(items []string, what string) error {
	for i, it := range items {
		if it == shardlist.WakeMarker {
			return cmdutil.UsageErrorf("%s %d is chatq's reserved wake-up marker", what, i+1)
		}
		if !utf8.ValidString(it) {
			// JSON output could not show it as a string: refused, as the
			// queue and chat commands refuse it.
			return cmdutil.WithHint(cmdutil.UsageErrorf("%s %d is not valid UTF-8", what, i+1),
				"chatq stores text; push binary data encoded, for example with base64")
		}
	}
	return nil
}

type listLengthResult struct {
	Key    string `json:"key"`
	Length int64  `json:"length"`
}

func pushRun(ctx context.Context, o *pushOptions) error {
	items, what := o.Items, "item"
	if o.Stdin {
		var err error
		o.IO.NoteStdin("items, one per line,")
		if items, err = iostreams.ReadLines(o.IO.In); err != nil {
			return fmt.Errorf("read items from stdin: %w", err)
		}
		what = "line"
		if err := checkItems(items, what); err != nil {
			return err
		}
	}
	c, err := o.lists()
	if err != nil {
		return err
	}
	push := c.LPush
	if o.Side == tail {
		push = c.RPush
	}
	n, err := pushInChunks(ctx, push, o.Key, items, o.IO.NewProgress("pushing", len(items)))
	var pe *shardlist.PushError
	switch {
	case errors.Is(err, shardlist.ErrReserved):
		return cmdutil.UsageErr(err)
	case errors.As(err, &pe):
		return o.partial(ctx, pe, what)
	case err != nil:
		return listError(c, o.Key, err)
	}
	if o.JSON {
		return o.IO.WriteJSON(listLengthResult{Key: o.Key, Length: n})
	}
	_, err = fmt.Fprintln(o.IO.Out, n)
	return err
}

// partial reports a push that stored some of its items before it failed:
// how many, and how to resume without duplicates.
func (o *pushOptions) partial(ctx context.Context, pe *shardlist.PushError, what string) error {
	if pe.Stored == 0 {
		// Only the first batch was sent: a lost reply is reported as for
		// any write (exit 4, with how to check).
		return pe.Err
	}
	from := func(n int) string {
		if o.Stdin {
			return fmt.Sprintf("line %d (tail -n +%d FILE | chatq list %spush %s -)", n, n, o.Side.name(), o.Key)
		}
		return fmt.Sprintf("item %d", n)
	}
	hint := fmt.Sprintf("%ss 1-%d are in the list; to resume without duplicates push from %s",
		what, pe.Stored, from(pe.Stored+1))
	if pe.Uncertain > 0 {
		check := fmt.Sprintf("-%d -1", pe.Uncertain)
		if o.Side == head {
			check = fmt.Sprintf("0 %d", pe.Uncertain-1)
		}
		hint = fmt.Sprintf("%ss 1-%d are in the list and %d-%d may be (the reply was lost): look with chatq list lrange %s %s, then push from %s if they are there, else from %s",
			what, pe.Stored, pe.Stored+1, pe.Stored+pe.Uncertain, o.Key, check,
			from(pe.Stored+pe.Uncertain+1), from(pe.Stored+1))
	}
	if ctx.Err() != nil {
		// Interrupted: chatq then prints only "interrupted", so say it here.
		o.IO.Infof("%s", pe.Error())
		o.IO.Infof("hint: %s", hint)
		return pe
	}
	return cmdutil.WithHint(pe, hint)
}

// pushInChunks pushes items a chunk at a time so that a long push can show
// its progress; each chunk is still sent in the package's batches. A
// failure after the first batch is a *shardlist.PushError counting every
// item stored.
func pushInChunks(ctx context.Context, push func(ctx context.Context, key string, items ...string) (int64, error), key string, items []string, p *iostreams.Progress) (int64, error) {
	const chunk = 5000
	defer p.Done()
	for start := 0; ; start += chunk {
		end := min(start+chunk, len(items))
		n, err := push(ctx, key, items[start:end]...)
		var pe *shardlist.PushError
		switch {
		case errors.As(err, &pe):
			pe.Stored += start
			pe.Total = len(items)
			return 0, pe
		case err != nil && start > 0:
			return 0, &shardlist.PushError{Key: key, Stored: start, Total: len(items), Err: err}
		case err != nil:
			return 0, err
		}
		p.Add(end - start)
		if end == len(items) {
			return n, nil
		}
	}
}
