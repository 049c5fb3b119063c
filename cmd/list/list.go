// Package list holds the `chatq list` commands: thin wrappers that parse
// flags, call pkg/shardlist and print.
package list

import (
	"errors"
	"fmt"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/spf13/cobra"
)

const listLong = `Operate the sharded list of "Redis in Action" §11.4: one logical list stored
as a run of Redis LISTs (shards) of at most --shard-size minus one items each,
pushed and popped by Lua scripts, with blocking pops.

Keys (behind --prefix): {KEY}:first and {KEY}:last hold the end shard numbers,
{KEY}:<n> is shard n. All share the hash tag {KEY}, so they live in one
Redis Cluster slot.`

// listOptions are the flags every list subcommand shares.
type listOptions struct {
	f         *cmdutil.Factory
	shardSize int
}

func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &listOptions{f: f}
	cmd := cmdutil.NewGroupCmd("list", "Sharded list of \"Redis in Action\" §11.4", listLong)
	cmd.Example = `  chatq list rpush jobs a b c
  seq 1000 | chatq list rpush jobs -
  chatq list lpop jobs -n 2
  chatq list blpop jobs --timeout 500ms
  chatq list shards jobs --shard-size 512`
	cmd.PersistentFlags().IntVar(&opts.shardSize, "shard-size", shardlist.DefaultShardSize,
		"a shard holds at most this many items minus one (the book's LIST_CHUNK_SIZE)")
	cmd.AddCommand(
		newListPushCmd(opts, shardlist.Left),
		newListPushCmd(opts, shardlist.Right),
		newListPopCmd(opts, shardlist.Left),
		newListPopCmd(opts, shardlist.Right),
		newListBPopCmd(opts, shardlist.Left),
		newListBPopCmd(opts, shardlist.Right),
		newListLenCmd(opts),
		newListRangeCmd(opts),
		newListShardsCmd(opts),
	)
	// A lost reply to these exits 4 ("may have applied"), with the command
	// that shows whether it was.
	for _, name := range []string{"lpush", "rpush", "lpop", "rpop", "blpop", "brpop"} {
		cmdutil.MarkWriteSub(cmd, name, "chatq list lrange KEY 0 -1")
	}
	for _, sub := range cmd.Commands() {
		sub.ValidArgsFunction = f.CompleteKeyArg("{*}:*")
	}
	return cmd
}

// list validates KEY and --shard-size (before any Redis call) and returns
// the sharded list.
func (o *listOptions) list(key string) (*shardlist.List, error) {
	if o.shardSize < 2 {
		return nil, cmdutil.WithHint(cmdutil.UsageErrorf("invalid --shard-size %d: %v", o.shardSize, shardlist.ErrShardSize),
			"a shard holds --shard-size minus one items; the default is 512")
	}
	c, err := o.f.Client()
	if err != nil {
		return nil, err
	}
	l, err := shardlist.New(c, key, shardlist.Options{Prefix: o.f.Prefix(), ShardSize: o.shardSize})
	if errors.Is(err, shardlist.ErrShardSize) {
		return nil, cmdutil.UsageErrorf("invalid --shard-size %d: %v", o.shardSize, err)
	}
	return l, err
}

// popResult maps a package pop error to the command's: an empty list is
// ErrNothing (exit 0, or 3 with -e).
func popResult(err error) error {
	if errors.Is(err, shardlist.ErrEmpty) {
		return cmdutil.ErrNothing
	}
	return err
}

// sideName is the command prefix for a side: "l" or "r".
func sideName(s shardlist.Side) string {
	if s == shardlist.Left {
		return "l"
	}
	return "r"
}

// printItems prints popped or listed items: each item and a newline, or a
// JSON array of strings.
func (o *listOptions) printItems(items []string) error {
	if o.f.JSON() {
		if items == nil {
			items = []string{}
		}
		return o.f.WriteJSON(items)
	}
	for _, it := range items {
		if _, err := fmt.Fprintln(o.f.IO.Out, it); err != nil {
			return err
		}
	}
	return nil
}
