package chat

import (
	"context"
	"fmt"
	"strings"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/names"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/spf13/cobra"
)

type chatCreateOptions struct {
	f       *cmdutil.Factory
	from    string
	to      []string
	id      string
	message *string
}

func newChatCreateCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &chatCreateOptions{f: f}
	cmd := &cobra.Command{
		Use:   "create --from USER --to USER[,USER...] [--id ID] [MESSAGE|-]",
		Short: "Create a chat, optionally sending its first message",
		Long: `Create a chat whose members are the sender and the recipients, each having
seen nothing (seen id 0), and print its id. With a MESSAGE (or '-' to read
it from stdin) the sender sends it as message 1, in the same atomic step.

--to takes one or more users other than --from (comma-separated or
repeated); it may name --from too, which changes nothing: the sender is a
member once either way. A --to with no other user (--to '', or only the
sender) is refused (exit 2).

Without --id the chat id is the next value of the ids:chat: counter. With
--id, creating a chat that already exists fails (exit 1) and changes nothing.

JSON: {"chat_id":"1","message_id":1}; message_id is left out when no
message was sent.`,
		Example: `  chatq chat create --from joe --to jeff,jenny 'message 1'
  chatq chat create --from joe --to jeff --id standup
  git log -1 | chatq chat create --from ci --to joe,jeff -`,
		Args:              cmdutil.RangeArgs(0, 1),
		ValidArgsFunction: cmdutil.CompleteNothing,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := names.User(opts.from); err != nil {
				return err
			}
			others := 0
			for _, u := range opts.to {
				if err := names.User(u); err != nil {
					return err
				}
				if u != opts.from {
					others++
				}
			}
			if others == 0 {
				return cmdutil.WithHint(cmdutil.UsageErrorf("--to %q names no recipient other than --from %s", strings.Join(opts.to, ","), opts.from),
					"give the other members: --to jeff,jenny (the sender is a member anyway)")
			}
			if opts.id != "" {
				if err := names.Chat(opts.id); err != nil {
					return err
				}
			}
			if len(args) == 1 {
				msg, err := readMessage(f, args[0])
				if err != nil {
					return err
				}
				opts.message = &msg
			}
			return chatCreateRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVar(&opts.from, "from", "", "the user creating the chat, a member too (required)")
	cmd.Flags().StringSliceVar(&opts.to, "to", nil, "the other members, comma-separated or repeated (required)")
	cmd.Flags().StringVar(&opts.id, "id", "", "chat id (default: the next number from ids:chat:)")
	_ = cmd.MarkFlagRequired("from")
	_ = cmd.MarkFlagRequired("to")
	return cmd
}

type chatCreateResult struct {
	ChatID    string `json:"chat_id"`
	MessageID int64  `json:"message_id,omitempty"`
}

func chatCreateRun(ctx context.Context, opts *chatCreateOptions) error {
	f := opts.f
	chats, err := chatClient(f)
	if err != nil {
		return err
	}
	c, err := chats.Create(ctx, chat.CreateRequest{From: opts.from, To: opts.to, ID: opts.id, Message: opts.message})
	if err != nil {
		return chatError(err, opts.id, opts.from)
	}
	if f.JSON() {
		return f.IO.WriteJSON(chatCreateResult{ChatID: c.ChatID, MessageID: c.MessageID})
	}
	fmt.Fprintln(f.IO.Out, c.ChatID)
	return nil
}
