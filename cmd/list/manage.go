package list

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/spf13/cobra"
)

// lsOptions are the options of list ls.
type lsOptions struct {
	listOptions
	Long bool
}

// NewCmdLs returns `chatq list ls`.
func NewCmdLs(f *cmdutil.Factory) *cobra.Command {
	opts := &lsOptions{}
	cmd := &cobra.Command{
		Use:   "ls [-l]",
		Short: "List the sharded lists under --prefix; -l with their lengths",
		Long: `List the sharded lists under --prefix, by key, sorted. They are found with
SCAN (COUNT 500 a call, node by node on a Cluster), so the listing walks the
keyspace in bounded calls; a list emptied by pops keeps some of its keys
and is listed (list del removes it). With -l each list's length and shard
count (one O(1) script call each).

No lists prints nothing ([] with -o json; "no lists" on a terminal) and
exits 0, or 3 with -e.`,
		Example: `  chatq list ls
  chatq list ls -l -o json
  chatq list ls -l --jq '.[] | select(.length == 0) | .key'   # emptied lists, for list del`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.RunWith(f, opts, nil, listLsRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.bindShared(f, cmd)
			return nil, nil
		}),
	}
	cmd.Flags().BoolVarP(&opts.Long, "long", "l", false, "show each list's length and shards")
	return cmdutil.MarkRead(cmd)
}

type listRow struct {
	Key    string `json:"key"`
	Length *int64 `json:"length,omitempty"`
	Shards *int64 `json:"shards,omitempty"`
}

func listLsRun(ctx context.Context, o *lsOptions) error {
	c, err := o.lists()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var cursor uint64
	for {
		page, next, err := c.Lists(ctx, cursor, "", 500)
		if err != nil {
			return err
		}
		for _, k := range page {
			seen[k] = true
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	keys := slices.Sorted(maps.Keys(seen))
	rows := make([]listRow, 0, len(keys))
	for _, k := range keys {
		r := listRow{Key: k}
		if o.Long {
			info, err := c.Info(ctx, k)
			if err != nil {
				return listError(c, k, err)
			}
			r.Length, r.Shards = &info.Length, &info.Shards
		}
		rows = append(rows, r)
	}
	if o.JSON {
		if err := o.IO.WriteJSON(rows); err != nil {
			return err
		}
	} else {
		var t *iostreams.Table
		if o.Long {
			t = o.IO.NewTable("KEY", "LENGTH", "SHARDS").WhenEmpty("no lists")
			for _, r := range rows {
				t.Row(r.Key, *r.Length, *r.Shards)
			}
		} else {
			t = o.IO.NewTable("KEY").WhenEmpty("no lists")
			for _, r := range rows {
				t.Row(r.Key)
			}
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(rows) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}

// delOptions are the options of list del.
type delOptions struct {
	keyOptions
	Force bool
}

// NewCmdDel returns `chatq list del`.
func NewCmdDel(f *cmdutil.Factory) *cobra.Command {
	opts := &delOptions{}
	cmd := &cobra.Command{
		Use:   "del KEY [--force]",
		Short: "Delete a sharded list (one holding items only with --force, or when asked)",
		Long: `Delete the sharded list KEY: every shard and its own keys, in calls of at
most 100 shards each (so a list of any size never costs the server one long
call), the list's keys last.

A list that holds items is not deleted without --force: on a terminal chatq
asks; off one it refuses (exit 2) and changes nothing (the check and the
first deletion are one script). An emptied list (its keys stay after the
last pop) or a missing one goes without asking. A push during a forced
delete lands in the list and goes with it: stop the producers first.`,
		Example: `  chatq list del jobs
  chatq list del big --force -o json
  chatq list ls -l --jq '.[] | select(.length == 0) | .key' | xargs -n1 chatq list del`,
		Args: cmdutil.ExactArgs(1),
		RunE: cmdutil.RunWith(f, opts, nil, delRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			return nil, opts.keyOptions.bind(f, cmd, args)
		}),
	}
	cmd.Flags().BoolVar(&opts.Force, "force", false, "delete a list that holds items, without asking")
	return cmdutil.MarkWrite(cmd, "chatq list llen KEY")
}

func delRun(ctx context.Context, o *delOptions) error {
	c, err := o.lists()
	if err != nil {
		return err
	}
	n, err := c.Delete(ctx, o.Key, o.Force)
	if errors.Is(err, shardlist.ErrNotEmpty) {
		if !o.IO.CanPrompt() {
			return cmdutil.WithHint(
				cmdutil.Refusedf("list %s holds %s items: not deleted (not on a terminal, so nobody could be asked)", o.Key, iostreams.Count(n)),
				"pass --force to delete its items without asking")
		}
		yes, err := o.IO.Confirm(ctx, fmt.Sprintf("delete list %s and its %s items? y/N", o.Key, iostreams.Count(n)))
		if err != nil {
			return err
		}
		if !yes {
			return cmdutil.Refusedf("list %s: not deleted", o.Key)
		}
		n, err = c.Delete(ctx, o.Key, true)
	}
	if err != nil {
		return listError(c, o.Key, err)
	}
	if o.JSON {
		return o.IO.WriteJSON(map[string]any{"deleted": o.Key, "items": n})
	}
	if o.IO.ErrTTY {
		o.IO.Infof("deleted list %s (%s items)", o.Key, iostreams.Count(n))
	}
	return nil
}
