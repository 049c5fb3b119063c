package list

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/spf13/cobra"
)

type popOptions struct {
	listOptions
	Side  side
	Key   string
	Count int
	// Timeout (--timeout) bounds the repeats of a pop whose reply was lost
	// (conn.Repeat); the pop carries a token, so a repeat is safe.
	Timeout time.Duration
}

// NewCmdPop returns `chatq list lpop` (head) or `rpop` (tail).
// runF: see cmdutil.RunWith.
func NewCmdPop(f *cmdutil.Factory, s side, runF func(context.Context, *popOptions) error) *cobra.Command {
	opts := &popOptions{Side: s}
	name := s.name() + "pop"
	end := s.String()
	cmd := &cobra.Command{
		Use:   name + " KEY",
		Short: "Pop items from the " + end + " of a sharded list, as " + strings.ToUpper(name),
		Long: `Pop up to COUNT items from the ` + end + ` of a sharded list, in one atomic
script call, in the order ` + strings.ToUpper(name) + ` KEY COUNT returns them on a plain
list. Each item is printed followed by a newline; -o json prints a JSON array
of strings. An empty list prints nothing ([] with -o json) and exits 0, or 3
with -e.

A pop carries a token: when its reply is lost it is sent again within
--timeout, and the server answers the repeat with the items it popped
(kept 10 minutes beside the list), printed once; no other item is popped.
When every repeat fails it exits 4: the items may be popped.`,
		Example: fmt.Sprintf(`  chatq list %[1]s jobs
  chatq list %[1]s jobs -n 10 -o json
  chatq -e list %[1]s jobs || echo empty`, name),
		Args: cmdutil.ExactArgs(1),
		RunE: cmdutil.RunWith(f, opts, runF, popRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.bindShared(f, cmd)
			opts.Key = args[0]
			if cfg := f.Config(); cfg != nil {
				opts.Timeout = cfg.Timeout
			}
			return nil, opts.validate()
		}),
	}
	cmd.Flags().IntVarP(&opts.Count, "count", "n", 1, "pop up to this many items")
	return cmdutil.MarkWrite(cmd, "chatq list lrange KEY 0 -1")
}

func (o *popOptions) validate() error {
	if err := names.ListKey(o.Key); err != nil {
		return err
	}
	if o.Count < 1 {
		return cmdutil.UsageErrorf("invalid --count %d: must be at least 1", o.Count)
	}
	return o.validateShardSize()
}

func popRun(ctx context.Context, o *popOptions) error {
	c, err := o.lists()
	if err != nil {
		return err
	}
	if err := o.checkSize(ctx, c, o.Key); err != nil {
		return err
	}
	// One token for every try: a repeat after a lost reply returns the
	// items the first popped and pops no others.
	opt := shardlist.PopOptions{Tail: o.Side == tail, Count: o.Count, Token: rand.Text()}
	// Items popped before an error (a pop of more than 1000 items takes
	// several calls) are out of the list: print them all the same.
	var items []string
	var tries conn.Tries
	err = conn.Repeat(ctx, o.Timeout, func(ctx context.Context) (err error) {
		opt.FirstTry = tries.First()
		items, err = c.Pop(ctx, o.Key, opt)
		return err
	})
	if perr := o.printItems(items); perr != nil {
		return perr
	}
	if err != nil && !errors.Is(err, shardlist.ErrEmpty) {
		return listError(c, o.Key, err)
	}
	if len(items) == 0 && o.IO.ErrTTY && !o.JSON {
		// As queue poll and chat pending say on a terminal: an empty
		// result is not a silent one.
		o.IO.Infof("no items: list %s is empty", o.Key)
	}
	return popResult(err)
}

type bpopOptions struct {
	listOptions
	// Persistent returns the reconnecting loop on the client's server.
	Persistent func(giveUpAfter time.Duration) *conn.Persistent

	Side side
	Key  string
	Wait time.Duration
	// GiveUpAfter ends the reconnecting after the server was away this long.
	GiveUpAfter time.Duration
	// Timeout (--timeout) bounds the repeats, after the wait ended, of a
	// pop whose reply was lost (conn.Repeat); the pop carries a token, so
	// a repeat is safe.
	Timeout time.Duration
}

// NewCmdBPop returns `chatq list blpop` (head) or `brpop` (tail).
// runF: see cmdutil.RunWith.
func NewCmdBPop(f *cmdutil.Factory, s side, runF func(context.Context, *bpopOptions) error) *cobra.Command {
	opts := &bpopOptions{Side: s}
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
--give-up-after ends the reconnecting.

The pop carries a token: the pop that takes the item records it (kept 10
minutes beside the list), so a pop whose reply was lost is sent again with
the token and gets that item, printed once, and takes no other; when the
wait has ended meanwhile (--wait, Ctrl-C, --give-up-after), it is sent
again without waiting, within --timeout. When every repeat fails it exits
4: the item may be taken (see chatq --help).`,
		Example: fmt.Sprintf(`  chatq list %[1]s jobs --wait 5s
  chatq list %[1]s jobs --wait 250ms -o json
  chatq list %[1]s jobs                # wait until an item comes`, name),
		Args: cmdutil.ExactArgs(1),
		RunE: cmdutil.RunWith(f, opts, runF, bpopRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.bindShared(f, cmd)
			opts.Persistent = f.Persistent
			opts.Key = args[0]
			if cfg := f.Config(); cfg != nil {
				opts.Timeout = cfg.Timeout
			}
			return nil, opts.validate()
		}),
	}
	cmd.Flags().DurationVar(&opts.Wait, "wait", 0, "how long to wait for an item, such as 5s or 250ms; 0 waits forever")
	cmd.Flags().DurationVar(&opts.GiveUpAfter, "give-up-after", 0, "exit 1 when the server has been unreachable this long (0: keep reconnecting until --wait ends)")
	return cmdutil.MarkWrite(cmd, "chatq list lrange KEY 0 -1")
}

func (o *bpopOptions) validate() error {
	if err := names.ListKey(o.Key); err != nil {
		return err
	}
	if o.Wait < 0 {
		return cmdutil.UsageErrorf("invalid --wait %s: must not be negative", o.Wait)
	}
	return o.validateShardSize()
}

func bpopRun(ctx context.Context, o *bpopOptions) error {
	c, err := o.lists()
	if err != nil {
		return err
	}
	if err := o.checkSize(ctx, c, o.Key); err != nil {
		return err
	}
	// One token for the whole wait: every pop of it carries the token,
	// and the one that takes the item records it, so that a pop whose
	// reply was lost, sent again, gets that item and takes no other.
	opt := shardlist.PopOptions{Tail: o.Side == tail, Block: true, Token: rand.Text()}
	// The item is printed as soon as the pop returns, in one write: see
	// "Blocking pops" in docs/shardlist.md for what a kill can still lose.
	// Through a restart or failover, or a lost reply, the wait goes on
	// (until --wait's deadline).
	var deadline time.Time
	if o.Wait > 0 {
		deadline = time.Now().Add(o.Wait)
	}
	var item string
	var popped bool
	// doubt is a pop whose reply was lost and which no pop with the token
	// has answered since: it may have taken the item.
	var doubt error
	p := o.Persistent(o.GiveUpAfter)
	var tries conn.Tries
	err = p.Run(ctx, func(ctx context.Context) error {
		opt.FirstTry = tries.First()
		opt.Wait = o.Wait
		if !deadline.IsZero() {
			if opt.Wait = time.Until(deadline); opt.Wait <= 0 {
				return shardlist.ErrEmpty
			}
		}
		items, err := c.Pop(ctx, o.Key, opt)
		switch {
		case err == nil:
			item, popped, doubt = items[0], true, nil
		case errors.Is(err, shardlist.ErrEmpty):
			doubt = nil
		case conn.ReplyLost(err) && !errors.Is(err, shardlist.ErrWait):
			doubt = err
		}
		if err == nil || errors.Is(err, shardlist.ErrEmpty) {
			p.Healthy()
		}
		return err
	})
	if doubt != nil && !popped {
		// The wait ended (deadline, interrupt, give-up) with a pop in
		// doubt: ask once more, without waiting, within --timeout.
		err = o.settle(ctx, c, opt, doubt, &item, &popped)
	}
	if popped {
		// Printed even when interrupted meanwhile: the pop took it.
		return o.printItems([]string{item})
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !errors.Is(err, shardlist.ErrEmpty) {
		return listError(c, o.Key, err)
	}
	if perr := o.printItems(nil); perr != nil {
		return perr
	}
	return popResult(err)
}

// settle sends the pop of opt, in doubt since its reply was lost (doubt),
// again with its token and no wait, within --timeout, even when ctx has
// ended: the record answers with the item the lost pop took, if it took
// one (else an item there now is taken, or none: ErrEmpty). When every
// try fails the error is still the lost reply (exit 4).
func (o *bpopOptions) settle(ctx context.Context, c *shardlist.Client, opt shardlist.PopOptions, doubt error, item *string, popped *bool) error {
	opt.Block, opt.Wait, opt.FirstTry = false, 0, false
	err := conn.Repeat(context.WithoutCancel(ctx), o.Timeout, func(ctx context.Context) error {
		items, err := c.Pop(ctx, o.Key, opt)
		if err == nil {
			*item, *popped = items[0], true
		}
		return err
	})
	if err == nil || errors.Is(err, shardlist.ErrEmpty) || conn.ReplyLost(err) {
		return err
	}
	return fmt.Errorf("%w (sent again: %v)", doubt, err)
}
