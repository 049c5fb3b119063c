package chat

import (
	"context"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/names"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/spf13/cobra"
)

type chatReadOptions struct {
	f    *cmdutil.Factory
	name string // a chat id or a user
}

func newChatMembersCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &chatReadOptions{f: f}
	return &cobra.Command{
		Use:   "members CHAT",
		Short: "List a chat's members and the last message id each has seen",
		Long: `List the chat's members with the highest message id each has seen.
Fails (exit 1) when the chat does not exist.

JSON: [{"user":"joe","seen_id":4}].`,
		Example:           `  chatq chat members 1`,
		Args:              cmdutil.ExactArgs(1),
		ValidArgsFunction: f.CompleteKeyArg("chat:{*}"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.name = args[0]
			if err := names.Chat(opts.name); err != nil {
				return err
			}
			return chatMembersRun(cmd.Context(), opts)
		},
	}
}

func chatMembersRun(ctx context.Context, opts *chatReadOptions) error {
	f := opts.f
	s, err := chatStore(f)
	if err != nil {
		return err
	}
	ms, err := s.Members(ctx, opts.name)
	if err != nil {
		return chatError(err, opts.name, "USER")
	}
	if f.JSON() {
		return f.WriteJSON(ms)
	}
	t := f.NewTable("USER", "SEEN")
	for _, m := range ms {
		t.Row(m.User, m.SeenID)
	}
	return t.Flush()
}

func newChatLsCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &chatReadOptions{f: f}
	return &cobra.Command{
		Use:   "ls USER",
		Short: "List a user's chats with their unread counts",
		Long: `List the chats USER is a member of, with the number of messages USER has
not seen and the last message id USER has seen. No chats prints nothing ([]
with -o json) and exits 0, or 3 with -e.

JSON: [{"chat_id":"1","seen_id":0,"unread":4}].`,
		Example:           `  chatq chat ls jeff`,
		Args:              cmdutil.ExactArgs(1),
		ValidArgsFunction: f.CompleteKeyArg("seen:{*}"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.name = args[0]
			if err := names.User(opts.name); err != nil {
				return err
			}
			return chatLsRun(cmd.Context(), opts)
		},
	}
}

func chatLsRun(ctx context.Context, opts *chatReadOptions) error {
	f := opts.f
	s, err := chatStore(f)
	if err != nil {
		return err
	}
	cs, err := s.Chats(ctx, opts.name)
	if err != nil {
		return err
	}
	if f.JSON() {
		if err := f.WriteJSON(cs); err != nil {
			return err
		}
	} else {
		t := f.NewTable("CHAT", "UNREAD", "SEEN").WhenEmpty("no chats")
		for _, c := range cs {
			t.Row(c.ChatID, c.Unread, c.SeenID)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(cs) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}

func newChatHistoryCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &chatReadOptions{f: f}
	return &cobra.Command{
		Use:   "history CHAT",
		Short: "Show the messages a chat still stores",
		Long: `Show the messages the chat still stores, oldest first: those some member
has not seen yet (the others are deleted). Reads only. Fails (exit 1) when
the chat does not exist; no stored messages prints nothing ([] with -o
json) and exits 0, or 3 with -e.

Text: chat id, message id, sender, message per line. JSON:
[{"id":1,"ts":1795266822.123,"sender":"joe","message":"…"}].`,
		Example:           `  chatq chat history 1 -o json`,
		Args:              cmdutil.ExactArgs(1),
		ValidArgsFunction: f.CompleteKeyArg("chat:{*}"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.name = args[0]
			if err := names.Chat(opts.name); err != nil {
				return err
			}
			return chatHistoryRun(cmd.Context(), opts)
		},
	}
}

func chatHistoryRun(ctx context.Context, opts *chatReadOptions) error {
	f := opts.f
	s, err := chatStore(f)
	if err != nil {
		return err
	}
	ms, err := s.History(ctx, opts.name)
	if err != nil {
		return chatError(err, opts.name, "USER")
	}
	if f.JSON() {
		if err := f.WriteJSON(ms); err != nil {
			return err
		}
	} else {
		t := f.NewTable("CHAT", "ID", "SENDER", "MESSAGE").WhenEmpty("no messages")
		for _, m := range flatten([]chat.ChatMessages{{ChatID: opts.name, Messages: ms}}) {
			t.Row(m.cells()...)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(ms) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}
