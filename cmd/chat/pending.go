package chat

import (
	"context"

	"github.com/chatq-dev/chatq/internal/cmdutil"
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

Text: one message per line: chat id, message id, sender, message (tabs and
newlines in the message escaped as \t and \n). JSON:
[{"chat_id":"1","messages":[{"id":1,"ts":1795266822.123,"sender":"joe","message":"…"}]}]

Nothing pending prints nothing ([] with -o json) and exits 0, or 3 with -e.
Whatever the number of chats, this costs 2 round trips to Redis (3 when
marking on a cluster; one fewer with --chat).`,
		Example: `  chatq chat pending jeff
  chatq chat pending jeff --peek -o json
  chatq chat pending jeff --chat 1`,
		Args:              cmdutil.ExactArgs(1),
		ValidArgsFunction: f.CompleteKeyArg("seen:{*}"),
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
	s, err := chatStore(f)
	if err != nil {
		return err
	}
	got, err := s.Pending(ctx, opts.user, chat.PendingOptions{Chat: opts.chatID, Peek: opts.peek})
	if err != nil {
		return chatError(err, opts.chatID, opts.user)
	}
	if f.JSON() {
		if got == nil {
			got = []chat.ChatMessages{}
		}
		if err := f.WriteJSON(got); err != nil {
			return err
		}
	} else {
		t := f.NewTable("CHAT", "ID", "SENDER", "MESSAGE").WhenEmpty("no pending messages")
		for _, m := range flatten(got) {
			t.Row(m.cells()...)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(got) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}
