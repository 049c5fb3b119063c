package chat

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/spf13/cobra"
)

type watchOptions struct {
	cmdutil.Output
	Client func() (*chat.Client, error) // built when the run calls it
	// Persistent returns the reconnecting loop on the client's server.
	Persistent func(giveUpAfter time.Duration) *conn.Persistent

	User string
	Mark bool
	Poll time.Duration
	// GiveUpAfter ends the reconnecting after the server was away this long.
	GiveUpAfter time.Duration
}

// NewCmdWatch returns `chatq chat watch` (runF: see cmdutil.RunWith).
func NewCmdWatch(f *cmdutil.Factory, runF func(context.Context, *watchOptions) error) *cobra.Command {
	opts := &watchOptions{}
	cmd := &cobra.Command{
		Use:   "watch USER",
		Short: "Follow a user's new messages as they arrive, like tail -f",
		Long: `Print USER's unseen messages, then each new message as it arrives, until
interrupted (Ctrl-C exits 0). By default watch only reads, like tail -f;
--mark marks what it prints as seen, like a loop of 'pending'.

Every send announces its chat on a Pub/Sub channel (<prefix>chat:sent);
watch reads when told, so it uses no CPU while the chats are idle, and also
every --poll in case a notification was lost (e.g. over a reconnect).

When the server goes away (a restart, a failover), watch says so once on
stderr, reconnects with capped exponential backoff and jitter, says when it
is back, and goes on after the last message it printed: nothing is printed
twice or skipped. Errors that retrying cannot fix (auth, ACL, wrong key
type) end it with exit 1, and so does --give-up-after when set.

Text: one message per line, as 'pending' prints them. JSON Lines, one
message per line: {"chat_id":"1","id":5,"ts":…,"sender":"joe","message":"…"}.`,
		Example: `  chatq chat watch jeff
  chatq chat watch jeff --mark --jq .message`,
		Args:              cmdutil.ExactArgs(1),
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(userNames)),
		RunE: cmdutil.RunWith(f, opts, runF, watchRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.User = args[0]
			opts.Client = chatClient(f)
			opts.Persistent = f.Persistent
			return nil, opts.validate()
		}),
	}
	cmd.Flags().BoolVar(&opts.Mark, "mark", false, "mark printed messages seen (deletes what every member has seen)")
	cmd.Flags().DurationVar(&opts.Poll, "poll", 5*time.Second, "read at least this often, should a notification be lost")
	cmd.Flags().DurationVar(&opts.GiveUpAfter, "give-up-after", 0, "exit 1 when the server has been unreachable this long (0: keep reconnecting)")
	// A read for the exit code even with --mark: a marking cut off by a
	// lost connection is retried after the reconnect, and marking again
	// changes nothing (seen ids only move forward).
	return cmdutil.MarkRead(cmd)
}

func (o *watchOptions) validate() error {
	if err := names.User(o.User); err != nil {
		return err
	}
	if o.Poll < 100*time.Millisecond {
		return cmdutil.UsageErrorf("invalid --poll %s: want at least 100ms", o.Poll)
	}
	return nil
}

func watchRun(ctx context.Context, o *watchOptions) error {
	chats, err := o.Client()
	if err != nil {
		return err
	}
	if o.IO.ErrTTY {
		o.IO.Infof("watching %s's chats; Ctrl-C to stop", o.User)
	}
	// Through a restart or failover, watch reconnects and goes on after the
	// last message it printed.
	p := o.Persistent(o.GiveUpAfter)
	wopts := chat.WatchOptions{Mark: o.Mark, Poll: o.Poll, After: map[string]int64{}, OnRead: p.Healthy}
	return p.Run(ctx, func(ctx context.Context) error {
		return chats.Watch(ctx, o.User, wopts, func(cs []chat.ChatMessages) error {
			lines := flatten(cs)
			defer reportProblems(o.IO, cs)
			if !o.JSON {
				writeMessageText(o.IO.Out, lines, o.IO.OutTTY)
				return nil
			}
			for _, l := range lines {
				if err := iostreams.WriteJSONLine(o.IO.Out, l); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

// writeMessageText prints messages one per line, tab-separated, with tabs
// and newlines in them escaped as in a table.
func writeMessageText(w io.Writer, lines []messageLine, tty bool) {
	esc := iostreams.CellEscaper.Replace
	if tty {
		esc = iostreams.TerminalSafe
	}
	for _, l := range lines {
		parts := []string{l.ChatID, strconv.FormatInt(l.ID, 10), esc(l.Sender), esc(l.Message.Message)}
		fmt.Fprintln(w, strings.Join(parts, "\t"))
	}
}
