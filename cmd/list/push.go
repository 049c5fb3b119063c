package list

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
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
	// Timeout (--timeout) bounds the repeats of a push whose reply was
	// lost (conn.Repeat); each push carries a token, so a repeat is safe.
	Timeout time.Duration
}

// NewCmdPush returns `chatq list lpush` (head) or `rpush` (tail).
// runF: see cmdutil.RunWith.
func NewCmdPush(f *cmdutil.Factory, s side, runF func(context.Context, *pushOptions) error) *cobra.Command {
	opts := &pushOptions{Side: s}
	name := s.name() + "push"
	end := s.String()
	cmd := &cobra.Command{
		Use:   name + " KEY ITEM...|-",
		Short: "Push items onto the " + end + " of a sharded list, as " + strings.ToUpper(name),
		Long: `Push items onto the ` + end + ` of a sharded list and print its new length. The
items end up in the order ` + strings.ToUpper(name) + ` would leave them on a plain list.

With - as the only item, items are read from stdin, one per line, and pushed as
they are read, in batches of up to 500 lines or 1 MiB per script call: memory
stays bounded whatever the input's size. Each batch is atomic, the whole push
is not. A line over 16 MiB, or not valid UTF-8, is refused when it is met;
the lines before it in its batch are not pushed, so an input of one batch is
pushed whole or not at all (exit 2). Whenever the push stops part way (a bad
line, a failed batch, a lost reply, Ctrl-C, which waits for the batch in
flight), chatq says which lines are in the list and how to resume without
duplicates (tail -n +N FILE | chatq list ` + name + ` KEY -). Items must be
valid UTF-8.

Each push (each batch, from stdin) carries a token: when its reply is lost
it is sent again within --timeout, and the server answers the repeat with
the first answer (kept 10 minutes beside the list) and stores nothing more.
When every repeat fails it exits 4, saying which items may be stored.

Items that start with - go after --, or they are taken for flags.`,
		Example: fmt.Sprintf(`  chatq list %[1]s jobs a b c
  printf 'x\ny\n' | chatq list %[1]s jobs -
  chatq list %[1]s jobs a -o json
  chatq list %[1]s jobs -- -1 -2   # items that start with -`, name),
		Args: cmdutil.MinArgs(2),
		RunE: cmdutil.RunWith(f, opts, runF, pushRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.bindShared(f, cmd)
			opts.Key, opts.Items = args[0], args[1:]
			opts.Stdin = len(opts.Items) == 1 && opts.Items[0] == "-"
			if cfg := f.Config(); cfg != nil {
				opts.Timeout = cfg.Timeout
			}
			return nil, opts.validate()
		}),
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
		if problem, hint := itemProblem(it); problem != "" {
			return withHint(cmdutil.UsageErrorf("%s %d %s", what, i+1, problem), hint)
		}
	}
	return nil
}

// withHint attaches hint to err, if there is one.
func withHint(err error, hint string) error {
	if hint == "" {
		return err
	}
	return cmdutil.WithHint(err, hint)
}

// itemProblem says what is wrong with an item chatq will not push, with a
// hint; "" when nothing is.
func itemProblem(it string) (problem, hint string) {
	switch {
	case it == shardlist.WakeMarker:
		return "is chatq's reserved wake-up marker", ""
	case !utf8.ValidString(it):
		// JSON output could not show it as a string: refused, as the
		// queue and chat commands refuse it.
		return "is not valid UTF-8", "chatq stores text; push binary data encoded, for example with base64"
	}
	return "", ""
}

type listLengthResult struct {
	Key    string `json:"key"`
	Length int64  `json:"length"`
}

func pushRun(ctx context.Context, o *pushOptions) error {
	c, err := o.lists()
	if err != nil {
		return err
	}
	if o.Stdin {
		return o.pushStdin(ctx, c)
	}
	n, err := pushInChunks(ctx, o.tokenPush(c), o.Key, o.Items, o.IO.NewProgress("pushing", len(o.Items)))
	var pe *shardlist.PushError
	switch {
	case errors.Is(err, shardlist.ErrReserved):
		return cmdutil.UsageErr(err)
	case errors.As(err, &pe):
		return o.partial(ctx, pe)
	case err != nil:
		return listError(c, o.Key, err)
	}
	return o.printLength(n)
}

// tokenPush returns a push onto o's end in which each call carries a token
// of its own and is sent again with it after a lost reply, within
// --timeout: a repeat makes the same script calls, which the records of
// those that applied answer, and stores each item once. When the repeats
// fail too, a *shardlist.PushError counts what the tries stored together.
func (o *pushOptions) tokenPush(c *shardlist.Client) func(ctx context.Context, key string, items ...string) (int64, error) {
	return func(ctx context.Context, key string, items ...string) (int64, error) {
		opt := shardlist.PushOptions{Head: o.Side == head, Token: rand.Text()}
		var n int64
		var last error
		// Items stored for certain by some try, and stored or maybe stored:
		// a repeat replays the calls before its first failure, so what one
		// try stored stays stored.
		certain, maybe := 0, 0
		var tries conn.Tries
		err := conn.Repeat(ctx, o.Timeout, func(ctx context.Context) (err error) {
			opt.FirstTry = tries.First()
			n, err = c.Push(ctx, key, items, opt)
			last = err
			var pe *shardlist.PushError
			if errors.As(err, &pe) {
				certain, maybe = max(certain, pe.Stored), max(maybe, pe.Stored+pe.Uncertain)
			}
			return err
		})
		if err == nil || maybe == 0 {
			return n, err
		}
		pe := &shardlist.PushError{Key: key, Stored: certain, Uncertain: max(0, maybe-certain), Total: len(items), Err: err}
		if pe.Uncertain == 0 {
			// No call is in doubt (a later try's record answered the lost
			// one): the failure is the last try's.
			pe.Err = last
			if lp := (*shardlist.PushError)(nil); errors.As(last, &lp) {
				pe.Err = lp.Err
			}
		}
		return 0, pe
	}
}

// printLength prints the list's length after a push.
func (o *pushOptions) printLength(n int64) error {
	if o.JSON {
		return o.IO.WriteJSON(listLengthResult{Key: o.Key, Length: n})
	}
	_, err := fmt.Fprintln(o.IO.Out, n)
	return err
}

// partial reports a push of items given as arguments that stored some of
// them before it failed: how many, and how to resume without duplicates.
func (o *pushOptions) partial(ctx context.Context, pe *shardlist.PushError) error {
	if pe.Stored == 0 {
		// Only the first batch was sent: a lost reply is reported as for
		// any write (exit 4, with how to check).
		return pe.Err
	}
	return o.report(ctx, pe, o.resumeHint(pe.Stored, pe.Uncertain))
}

// resumeHint says which items (lines of stdin, or items given) are in the
// list after a push that stopped, and from where to resume it without
// duplicates: after stored items for certain, and uncertain more that may
// be there (their reply was lost).
func (o *pushOptions) resumeHint(stored, uncertain int) string {
	what := "item"
	from := func(n int) string { return fmt.Sprintf("item %d", n) }
	if o.Stdin {
		what = "line"
		from = func(n int) string {
			return fmt.Sprintf("line %d (tail -n +%d FILE | chatq list %spush %s -)", n, n, o.Side.name(), o.Key)
		}
	}
	in := fmt.Sprintf("%ss 1-%d are in the list", what, stored)
	if stored == 0 {
		in = fmt.Sprintf("no %s is in the list for certain", what)
	}
	if uncertain == 0 {
		return fmt.Sprintf("%s; to resume without duplicates push from %s", in, from(stored+1))
	}
	check := fmt.Sprintf("-%d -1", uncertain)
	if o.Side == head {
		check = fmt.Sprintf("0 %d", uncertain-1)
	}
	return fmt.Sprintf("%s and %d-%d may be (the reply was lost): look with chatq list lrange %s %s, then push from %s if they are there, else from %s",
		in, stored+1, stored+uncertain, o.Key, check, from(stored+uncertain+1), from(stored+1))
}

// report returns err, a push that stopped part way, with hint; when
// interrupted it says both on stderr, as chatq then prints only
// "interrupted".
func (o *pushOptions) report(ctx context.Context, err error, hint string) error {
	if ctx.Err() != nil && !conn.ReplyLost(err) {
		o.IO.Infof("%s", err)
		o.IO.Infof("hint: %s", hint)
		return err
	}
	return cmdutil.WithHint(err, hint)
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
