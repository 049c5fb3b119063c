package chat

import (
	"context"
	"time"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/internal/names"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/spf13/cobra"
)

type chatWatchOptions struct {
	f    *cmdutil.Factory
	user string
	mark bool
	poll time.Duration
	// giveUpAfter ends the reconnecting after the server was away this long.
	giveUpAfter time.Duration
}

func newChatWatchCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &chatWatchOptions{f: f}
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
  chatq chat watch jeff --mark -o json | jq .message`,
		Args:              cmdutil.ExactArgs(1),
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(userNames)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.user = args[0]
			if err := names.User(opts.user); err != nil {
				return err
			}
			if opts.poll < 100*time.Millisecond {
				return cmdutil.UsageErrorf("invalid --poll %s: want at least 100ms", opts.poll)
			}
			return chatWatchRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().BoolVar(&opts.mark, "mark", false, "mark printed messages seen (deletes what every member has seen)")
	cmd.Flags().DurationVar(&opts.poll, "poll", 5*time.Second, "read at least this often, should a notification be lost")
	cmd.Flags().DurationVar(&opts.giveUpAfter, "give-up-after", 0, "exit 1 when the server has been unreachable this long (0: keep reconnecting)")
	return cmd
}

func chatWatchRun(ctx context.Context, opts *chatWatchOptions) error {
	f := opts.f
	chats, err := chatClient(f)
	if err != nil {
		return err
	}
	if f.IO.ErrTTY {
		f.IO.Infof("watching %s's chats; Ctrl-C to stop", opts.user)
	}
	// Through a restart or failover, watch reconnects and goes on after the
	// last message it printed.
	p := f.Persistent(opts.giveUpAfter)
	wopts := chat.WatchOptions{Mark: opts.mark, Poll: opts.poll, After: map[string]int64{}, OnRead: p.Healthy}
	return p.Run(ctx, func(ctx context.Context) error {
		return chats.Watch(ctx, opts.user, wopts, func(cs []chat.ChatMessages) error {
			lines := flatten(cs)
			defer reportProblems(f, cs)
			if !f.JSON() {
				writeMessageText(f.IO.Out, lines, f.IO.OutTTY)
				return nil
			}
			for _, l := range lines {
				if err := iostreams.WriteJSONLine(f.IO.Out, l); err != nil {
					return err
				}
			}
			return nil
		})
	})
}
