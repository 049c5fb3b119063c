package list

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// keyOptions are the options of llen and shards, which read one list.
type keyOptions struct {
	listOptions
	Key string
}

func (o *keyOptions) validate() error {
	if err := names.ListKey(o.Key); err != nil {
		return err
	}
	return o.validateShardSize()
}

// bind reads KEY and the shared options, and validates them.
func (o *keyOptions) bind(f *cmdutil.Factory, cmd *cobra.Command, args []string) error {
	o.bindShared(f, cmd)
	o.Key = args[0]
	return o.validate()
}

// NewCmdLen returns `chatq list llen` (runF: see cmdutil.RunWith).
func NewCmdLen(f *cmdutil.Factory, runF func(context.Context, *keyOptions) error) *cobra.Command {
	opts := &keyOptions{}
	cmd := &cobra.Command{
		Use:   "llen KEY",
		Short: "Print the number of items in a sharded list, as LLEN",
		Long: `Print the number of items in a sharded list: the lengths of its two end
shards plus the count kept for the shards between them, read in one atomic
script call whose cost does not grow with the list. A list that does not
exist has length 0.`,
		Example: `  chatq list llen jobs
  chatq list llen jobs -o json`,
		Args: cmdutil.ExactArgs(1),
		RunE: cmdutil.RunWith(f, opts, runF, lenRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			return nil, opts.bind(f, cmd, args)
		}),
	}
	return cmdutil.MarkRead(cmd)
}

func lenRun(ctx context.Context, o *keyOptions) error {
	c, err := o.lists()
	if err != nil {
		return err
	}
	if err := o.checkSize(ctx, c, o.Key); err != nil {
		return err
	}
	n, err := c.LLen(ctx, o.Key)
	if err != nil {
		return listError(c, o.Key, err)
	}
	if n == 0 {
		if err := o.plainList(ctx, o.Key); err != nil {
			return err
		}
	}
	if o.JSON {
		return o.IO.WriteJSON(listLengthResult{Key: o.Key, Length: n})
	}
	_, err = fmt.Fprintln(o.IO.Out, n)
	return err
}

type rangeOptions struct {
	listOptions
	Key         string
	Start, Stop int64
}

// NewCmdRange returns `chatq list lrange` (runF: see cmdutil.RunWith).
func NewCmdRange(f *cmdutil.Factory, runF func(context.Context, *rangeOptions) error) *cobra.Command {
	opts := &rangeOptions{}
	var positional []string
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

Flags may go anywhere: a negative number is an index, never a flag.`,
		Example: `  chatq list lrange jobs 0 -1
  chatq list lrange jobs -3 -1 -o json`,
		// Flags after KEY are parsed here, where a negative index is told
		// from a flag; this runs before the configuration is loaded, so
		// -o json there counts.
		Args: func(cmd *cobra.Command, args []string) error {
			var err error
			if positional, err = indexArgs(cmd, args); err != nil {
				return err
			}
			return cmdutil.ExactArgs(3)(cmd, positional)
		},
		RunE: cmdutil.RunWith(f, opts, runF, rangeRun, func(cmd *cobra.Command, _ []string) (cmdutil.Run, error) {
			args := positional
			opts.bindShared(f, cmd)
			opts.Key = args[0]
			var err error
			if opts.Start, err = parseIndex("START", args[1]); err != nil {
				return nil, err
			}
			if opts.Stop, err = parseIndex("STOP", args[2]); err != nil {
				return nil, err
			}
			return nil, opts.validate()
		}),
	}
	// cobra stops at KEY; indexArgs parses the flags after it.
	cmd.Flags().SetInterspersed(false)
	return cmdutil.MarkRead(cmd)
}

// indexArgs parses the flags among args, where a negative number such as
// -1 is an argument and not a flag, and returns the arguments.
func indexArgs(cmd *cobra.Command, args []string) ([]string, error) {
	var positional, flags []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			positional = append(positional, args[i+1:]...)
			break
		}
		if _, err := strconv.ParseInt(a, 10, 64); err == nil || len(a) < 2 || a[0] != '-' {
			positional = append(positional, a)
			continue
		}
		flags = append(flags, a)
		if takesNext(cmd, a) && i+1 < len(args) {
			i++
			flags = append(flags, args[i])
		}
	}
	if err := cmd.Flags().Parse(flags); err != nil {
		return nil, cmdutil.UsageErr(err)
	}
	return positional, nil
}

// takesNext reports whether flag argument a (--name, -x or -xyz) leaves
// its value to the next argument.
func takesNext(cmd *cobra.Command, a string) bool {
	needsValue := func(fl *pflag.Flag) bool { return fl != nil && fl.NoOptDefVal == "" }
	if name, ok := strings.CutPrefix(a, "--"); ok {
		return !strings.Contains(name, "=") && needsValue(cmd.Flags().Lookup(name))
	}
	for i, c := range a[1:] {
		if fl := cmd.Flags().ShorthandLookup(string(c)); needsValue(fl) {
			return i == len(a)-2 // the value is the rest of a, or the next argument
		}
	}
	return false
}

func (o *rangeOptions) validate() error {
	if err := names.ListKey(o.Key); err != nil {
		return err
	}
	return o.validateShardSize()
}

func parseIndex(name, s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, cmdutil.UsageErrorf("invalid %s %q: want an integer index such as 0 or -1", name, s)
	}
	return n, nil
}

func rangeRun(ctx context.Context, o *rangeOptions) error {
	c, err := o.lists()
	if err != nil {
		return err
	}
	if err := o.checkSize(ctx, c, o.Key); err != nil {
		return err
	}
	items, err := c.LRange(ctx, o.Key, o.Start, o.Stop)
	if err != nil {
		return listError(c, o.Key, err)
	}
	if len(items) == 0 {
		if err := o.plainList(ctx, o.Key); err != nil {
			return err
		}
	}
	if err := o.printItems(items); err != nil {
		return err
	}
	if len(items) == 0 {
		return cmdutil.ErrNothing // exit 3 with -e
	}
	return nil
}

// NewCmdShards returns `chatq list shards` (runF: see cmdutil.RunWith).
func NewCmdShards(f *cmdutil.Factory, runF func(context.Context, *keyOptions) error) *cobra.Command {
	opts := &keyOptions{}
	cmd := &cobra.Command{
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
		RunE: cmdutil.RunWith(f, opts, runF, shardsRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			return nil, opts.bind(f, cmd, args)
		}),
	}
	return cmdutil.MarkRead(cmd)
}

func shardsRun(ctx context.Context, o *keyOptions) error {
	c, err := o.lists()
	if err != nil {
		return err
	}
	if err := o.checkSize(ctx, c, o.Key); err != nil {
		return err
	}
	lay, err := c.Layout(ctx, o.Key)
	if err != nil {
		return listError(c, o.Key, err)
	}
	if lay.Length == 0 {
		if err := o.plainList(ctx, o.Key); err != nil {
			return err
		}
	}
	if o.JSON {
		return o.IO.WriteJSON(lay)
	}
	t := o.IO.NewTable("SHARD", "KEY", "LENGTH", "END")
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
