package chat

import (
	"context"
	"fmt"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/spf13/cobra"
)

type pendingOptions struct {
	cmdutil.Output
	Client func() (*chat.Client, error) // built when the run calls it

	User string
	// Chat is --chat, ChatGiven whether it was given (--chat '' is a bad
	// chat id, not all chats).
	Chat      string
	ChatGiven bool
	Peek      bool
}

// NewCmdPending returns `chatq chat pending` (runF: see cmdutil.RunWith).
func NewCmdPending(f *cmdutil.Factory, runF func(context.Context, *pendingOptions) error) *cobra.Command {
	opts := &pendingOptions{}
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
		RunE: cmdutil.RunWith(f, opts, runF, pendingRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.User = args[0]
			opts.ChatGiven = cmd.Flags().Changed("chat")
			opts.Client = chatClient(f)
			return nil, opts.validate()
		}),
	}
	cmd.Flags().StringVar(&opts.Chat, "chat", "", "read only this chat")
	cmd.Flags().BoolVar(&opts.Peek, "peek", false, "read without marking anything seen")
	return cmdutil.MarkWrite(cmd, "chatq chat pending USER --peek")
}

func (o *pendingOptions) validate() error {
	if err := names.User(o.User); err != nil {
		return err
	}
	if o.ChatGiven {
		return names.Chat(o.Chat)
	}
	return nil
}

func pendingRun(ctx context.Context, o *pendingOptions) error {
	chats, err := o.Client()
	if err != nil {
		return err
	}
	// Read without marking, print, then mark what was printed.
	got, err := chats.Pending(ctx, o.User, chat.PendingOptions{Chat: o.Chat, Peek: true})
	if err != nil {
		return nothingMarked(chatError(err, o.Chat, o.User))
	}
	if err := printPending(o, got); err != nil {
		return nothingMarked(err)
	}
	broken := reportProblems(o.IO, got)
	if !o.Peek {
		if err := chats.MarkSeen(ctx, o.User, got); err != nil {
			if conn.ReplyLost(err) {
				return err // exit 4: the marking may have happened
			}
			return cmdutil.WithHint(err, "the messages printed were not marked seen: the next pending prints them again")
		}
	}
	if broken > 0 {
		done := "printed and marked seen"
		if o.Peek {
			done = "printed"
		}
		return fmt.Errorf("%d chat(s) could not be read (above); the others were %s", broken, done)
	}
	if len(got) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}

func printPending(o *pendingOptions, got []chat.ChatMessages) error {
	if o.JSON {
		if got == nil {
			got = []chat.ChatMessages{}
		}
		return o.IO.WriteJSON(got)
	}
	t := o.IO.NewTable("CHAT", "ID", "SENDER", "MESSAGE").WhenEmpty("no pending messages")
	for _, m := range flatten(got) {
		t.Row(m.cells()...)
	}
	return t.Flush()
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
