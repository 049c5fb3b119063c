// Package list holds the `chatq list` commands: thin wrappers that parse
// flags, call pkg/shardlist and print.
package list

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

const listLong = `Operate the sharded list of "Redis in Action" §11.4: one logical list stored
as a run of Redis LISTs (shards) of at most --shard-size minus one items each,
pushed and popped by Lua scripts, with blocking pops.

The first push records the shard size with the list ({KEY}:size); later
pushes use it, and a different explicit --shard-size is refused (exit 2) by
every list command.

Items that start with - go after --: chatq list rpush jobs -- -1 -2

Keys (behind --prefix): {KEY}:first and {KEY}:last hold the end shard numbers,
{KEY}:mid counts the items between them, {KEY}:size and {KEY}:ver hold the
shard size and a write counter, {KEY}:<n> is shard n. All share the hash tag
{KEY}, so they live in one Redis Cluster slot.`

func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroupCmd("list", "Sharded list of \"Redis in Action\" §11.4", listLong)
	cmd.Example = `  chatq list rpush jobs a b c
  seq 1000 | chatq list rpush jobs -
  chatq list lpop jobs -n 2
  chatq list blpop jobs --wait 500ms
  chatq list rpush jobs --shard-size 64 a b c   # a new list of 63-item shards
  chatq list rpush jobs -- -1 -2                # items that start with -
  chatq list ls -l                              # every list, with its length
  chatq list del jobs --force`
	addShardSizeFlag(cmd)
	cmd.AddCommand(
		NewCmdPush(f, head, nil),
		NewCmdPush(f, tail, nil),
		NewCmdPop(f, head, nil),
		NewCmdPop(f, tail, nil),
		NewCmdBPop(f, head, nil),
		NewCmdBPop(f, tail, nil),
		NewCmdLen(f, nil),
		NewCmdRange(f, nil),
		NewCmdShards(f, nil),
		NewCmdLs(f),
		NewCmdDel(f),
	)
	for _, sub := range cmd.Commands() {
		if sub.Name() != "ls" {
			sub.ValidArgsFunction = f.CompleteFirstArg(cmdutil.PagedLister(listKeys))
		}
	}
	return cmd
}

// addShardSizeFlag gives the list group its --shard-size, which every list
// command reads (bindShared).
func addShardSizeFlag(group *cobra.Command) {
	group.PersistentFlags().Int("shard-size", 0,
		"for a push to a new list: a shard holds at most this many items minus one (default 512, the book's LIST_CHUNK_SIZE); a list keeps the size of its first push")
}

// listOptions are the options every list command has.
type listOptions struct {
	cmdutil.Output
	// Redis returns the server's client, built when a run first calls it;
	// Prefix goes in front of every key.
	Redis  func() (redis.UniversalClient, error)
	Prefix string
	// ShardSize is --shard-size, ShardSizeGiven whether it was given: a
	// list keeps the size of its first push, and a command given another
	// size is refused.
	ShardSize      int
	ShardSizeGiven bool
}

// bindShared reads the options every list command has but its Output
// (cmdutil.RunWith fills that), once the flags are parsed.
func (o *listOptions) bindShared(f *cmdutil.Factory, cmd *cobra.Command) {
	o.Redis, o.Prefix = f.Client, f.Prefix()
	o.ShardSize, _ = cmd.Flags().GetInt("shard-size")
	o.ShardSizeGiven = cmd.Flags().Changed("shard-size")
}

// validateShardSize refuses a --shard-size below 2, before any Redis call.
func (o *listOptions) validateShardSize() error {
	if o.ShardSizeGiven && o.ShardSize < 2 {
		return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --shard-size %d: %v", o.ShardSize, shardlist.ErrShardSize),
			"a shard holds --shard-size minus one items; the default is 512")
	}
	return nil
}

// listKeys pages through the sharded lists on the server, for shell
// completion.
func listKeys(f *cmdutil.Factory) (cmdutil.Pager, error) {
	c, err := f.Client()
	if err != nil {
		return nil, err
	}
	return shardlist.New(c, shardlist.Options{Prefix: f.Prefix()}).Lists, nil
}

// side is the end of the list a command works on.
type side int

const (
	head side = iota // lpush, lpop, blpop
	tail             // rpush, rpop, brpop
)

// name is the command prefix for a side: "l" or "r".
func (s side) name() string {
	if s == head {
		return "l"
	}
	return "r"
}

func (s side) String() string {
	if s == head {
		return "head"
	}
	return "tail"
}

// lists returns the sharded lists' client, with --shard-size when given.
func (o *listOptions) lists() (*shardlist.Client, error) {
	c, err := o.Redis()
	if err != nil {
		return nil, err
	}
	size := 0 // the list's recorded size, or the default
	if o.ShardSizeGiven {
		size = o.ShardSize
	}
	return shardlist.New(c, shardlist.Options{Prefix: o.Prefix, ShardSize: size}), nil
}

// checkSize refuses, for a command that does not push, an explicit
// --shard-size other than the size recorded with the list (a push's script
// checks that itself). A list with no recorded size takes any.
func (o *listOptions) checkSize(ctx context.Context, c *shardlist.Client, key string) error {
	if !o.ShardSizeGiven {
		return nil
	}
	info, err := c.Info(ctx, key)
	if err != nil || info.ShardSize == 0 || info.ShardSize == int64(o.ShardSize) {
		return nil // none recorded; a failure is reported by the command itself
	}
	return listError(c, key, &shardlist.ShardSizeError{Key: key, Recorded: int(info.ShardSize), Asked: o.ShardSize})
}

// listError adds the hint for a package error: a corrupt list, a shard
// size other than the list's (a usage error, exit 2).
func listError(c *shardlist.Client, key string, err error) error {
	var se *shardlist.ShardSizeError
	switch {
	case errors.As(err, &se):
		return cmdutil.WithHint(cmdutil.UsageErr(fmt.Errorf("invalid --shard-size %d: %w", se.Asked, err)),
			fmt.Sprintf("list %s keeps the shard size of its first push, %d: drop --shard-size, or pass --shard-size %d", key, se.Recorded, se.Recorded))
	case errors.Is(err, shardlist.ErrCorrupt):
		return cmdutil.WithHint(err, fmt.Sprintf("nothing was changed; see the keys with redis-cli --scan --pattern '%s' and repair them as docs/shardlist.md (Repairing a list) says",
			c.KeyPattern(key)))
	}
	return err
}

// plainList returns an error when KEY names a plain Redis LIST (and the
// sharded list KEY is empty), so that a user who mixed them up is told.
func (o *listOptions) plainList(ctx context.Context, key string) error {
	c, err := o.Redis()
	if err != nil {
		return err
	}
	if typ, err := c.Type(ctx, o.Prefix+key).Result(); err == nil && typ == "list" {
		return cmdutil.WithHint(fmt.Errorf("%s%s is a plain Redis LIST, not a sharded list", o.Prefix, key),
			fmt.Sprintf("chatq list works on sharded lists ({%s}:* keys); read a plain LIST with redis-cli LLEN/LRANGE", key))
	}
	return nil
}

// popResult maps a package pop error to the command's: an empty list is
// ErrNothing (exit 0, or 3 with -e).
func popResult(err error) error {
	if errors.Is(err, shardlist.ErrEmpty) {
		return cmdutil.ErrNothing
	}
	return err
}

// printItems prints popped or listed items: each item and a newline, or a
// JSON array of strings. An item that is not valid UTF-8 (chatq refuses
// those, another client may push them) is printed byte for byte as text,
// and as {"base64":"…"} in the JSON array, so that no byte is lost. The
// items go out in one write, so that a process killed after a pop has
// printed all of its items or none (docs/shardlist.md).
func (o *listOptions) printItems(items []string) error {
	if o.JSON {
		out := make([]any, len(items))
		for i, it := range items {
			if utf8.ValidString(it) {
				out[i] = it
			} else {
				out[i] = binaryItem{base64.StdEncoding.EncodeToString([]byte(it))}
			}
		}
		return o.IO.WriteJSON(out)
	}
	var b strings.Builder
	for _, it := range items {
		if o.IO.OutTTY {
			it = iostreams.TerminalSafe(it) // piped output stays byte-exact
		}
		b.WriteString(it)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(o.IO.Out, b.String())
	return err
}

// binaryItem is an item that is not valid UTF-8, in JSON output.
type binaryItem struct {
	Base64 string `json:"base64"`
}
