package chat

import (
	"context"
	"fmt"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/names"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/spf13/cobra"
)

type chatPendingOptions struct {
	f      *cmdutil.Factory
	user   string
	chatID string
	peek   bool
}

func newChatPendingCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &chatPendingOptions{f: f}
	cmd := &cobra.Command{
		Use:   "pending USER [--chat ID] [--peek]",
		Short: "Fetch the messages a user has not seen, and mark them seen",
		Long: `Print the messages USER has not seen, per chat, oldest first; then mark them
seen and delete the messages every member of the chat has now seen.
--peek only reads. --chat reads one chat (exit 1 if USER is not a member).

Messages are marked seen only after they were printed (at-least-once):
should marking fail, or its reply be lost (exit 4), the messages printed
may be printed again by the next pending, never lost. Two pendings of the
same user at the same time may both print a message.

Text: one message per line: chat id, message id, sender, message (tabs and
newlines in the message escaped as \t and \n). JSON:
[{"chat_id":"1","messages":[{"id":1,"ts":1795266822.123,"sender":"joe","message":"…"}]}]

A stored value that is not a message is reported on stderr (chat and id;
in JSON also as "skipped":[{"id":3,"raw":"…","error":"…"}] of its chat)
and marked seen with the others: it is reported once. A chat that cannot be
read (a key of the wrong type) is reported on stderr ("error" in JSON) and
nothing of it is marked; the other chats are printed and marked, and the
command exits 1.

Nothing pending prints nothing ([] with -o json) and exits 0, or 3 with -e.
Round trips: 1 to list the chats, 1 more (one MGET) from 8 chats on to find
those with news, 1 to read them all (plus 1 per 500 messages in a chat),
and 1 to mark (2 on a cluster); --chat skips the first two.`,
		Example: `  chatq chat pending jeff
  chatq chat pending jeff --peek -o json
  chatq chat pending jeff --chat 1`,
		Args:              cmdutil.ExactArgs(1),
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(userNames)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.user = args[0]
			if err := names.User(opts.user); err != nil {
				return err
			}
			if cmd.Flags().Changed("chat") {
				if err := names.Chat(opts.chatID); err != nil {
					return err
				}
			}
			return chatPendingRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.chatID, "chat", "", "read only this chat")
	cmd.Flags().BoolVar(&opts.peek, "peek", false, "read without marking anything seen")
	return cmd
}

func chatPendingRun(ctx context.Context, opts *chatPendingOptions) error {
	f := opts.f
	chats, err := chatClient(f)
	if err != nil {
		return err
	}
	// Read without marking, print, then mark what was printed.
	got, err := chats.Pending(ctx, opts.user, chat.PendingOptions{Chat: opts.chatID, Peek: true})
	if err != nil {
		return nothingMarked(chatError(err, opts.chatID, opts.user))
	}
	if err := printPending(f, got); err != nil {
		return nothingMarked(err)
	}
	broken := reportProblems(f, got)
	if !opts.peek {
		if err := chats.MarkSeen(ctx, opts.user, got); err != nil {
			if conn.ReplyLost(err) {
				return err // exit 4: the marking may have happened
			}
			return cmdutil.WithHint(err, "the messages printed were not marked seen: the next pending prints them again")
		}
	}
	if broken > 0 {
		done := "printed and marked seen"
		if opts.peek {
			done = "printed"
		}
		return fmt.Errorf("%d chat(s) could not be read (above); the others were %s", broken, done)
	}
	if len(got) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}

func printPending(f *cmdutil.Factory, got []chat.ChatMessages) error {
	if f.JSON() {
		if got == nil {
			got = []chat.ChatMessages{}
		}
		return f.IO.WriteJSON(got)
	}
	t := f.IO.NewTable("CHAT", "ID", "SENDER", "MESSAGE").WhenEmpty("no pending messages")
	for _, m := range flatten(got) {
		t.Row(m.cells()...)
	}
	return t.Flush()
}

// reportProblems writes the chats that could not be read and the stored
// values that are not messages to stderr, and returns how many chats
// could not be read.
func reportProblems(f *cmdutil.Factory, got []chat.ChatMessages) int {
	broken := 0
	for _, c := range got {
		if c.Error != "" {
			broken++
			f.IO.Infof("error: %s", c.Error)
			f.IO.Infof("hint: see the chat's keys with `redis-cli TYPE` (docs/chat.md, Repairs); nothing of chat %s was marked seen", c.ChatID)
		}
		for _, sk := range c.Skipped {
			f.IO.Infof("warning: chat %s: message %d is not a chat message, skipped: %s", c.ChatID, sk.ID, sk.Error)
		}
	}
	return broken
}

// nothingMarked keeps a lost reply before any marking from exiting 4: the
// reads of pending write nothing, so it was not applied.
func nothingMarked(err error) error {
	if !conn.ReplyLost(err) {
		return err
	}
	return cmdutil.WithHint(readFailed{err}, "nothing was marked seen; run it again")
}

// readFailed hides a lost reply from the exit code mapping (exit 1, not 4).
type readFailed struct{ err error }

func (e readFailed) Error() string { return e.err.Error() }
