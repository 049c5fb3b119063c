package chat

import (
	"context"
	"fmt"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/names"
	"github.com/spf13/cobra"
)

type chatSendOptions struct {
	f       *cmdutil.Factory
	chatID  string
	from    string
	message string
}

func newChatSendCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &chatSendOptions{f: f}
	cmd := &cobra.Command{
		Use:   "send CHAT --from USER MESSAGE|-",
		Short: "Send a message to a chat",
		Long: `Send MESSAGE (or '-' to read it from stdin) to the chat as USER and print
its id. The id comes from the chat's counter and the message is stored in
one atomic step, so concurrent senders never share an id.

Fails (exit 1) when the chat does not exist or USER is not a member; nothing
is written then. JSON: {"chat_id":"1","message_id":5}.`,
		Example: `  chatq chat send 1 --from joe 'message 2'
  printf 'two\nlines' | chatq chat send 1 --from jeff -`,
		Args:              cmdutil.ExactArgs(2),
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(chatIDs)),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.chatID = args[0]
			if err := names.Chat(opts.chatID); err != nil {
				return err
			}
			if err := names.User(opts.from); err != nil {
				return err
			}
			msg, err := readMessage(f, args[1])
			if err != nil {
				return err
			}
			opts.message = msg
			return chatSendRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.from, "from", "", "the sending member (required)")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}

type chatSendResult struct {
	ChatID    string `json:"chat_id"`
	MessageID int64  `json:"message_id"`
}

func chatSendRun(ctx context.Context, opts *chatSendOptions) error {
	f := opts.f
	chats, err := chatClient(f)
	if err != nil {
		return err
	}
	id, err := chats.Send(ctx, opts.chatID, opts.from, opts.message)
	if err != nil {
		return chatError(err, opts.chatID, opts.from)
	}
	if f.JSON() {
		return f.IO.WriteJSON(chatSendResult{ChatID: opts.chatID, MessageID: id})
	}
	fmt.Fprintln(f.IO.Out, id)
	return nil
}
