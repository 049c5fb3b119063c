package chat

import (
	"context"
	"errors"
	"fmt"

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
		Short: "List a chat's members, the last message id each has seen, and their unread counts",
		Long: `List the chat's members with the highest message id each has seen and how
many of the stored messages each has not seen yet (who has not read
this?). Fails (exit 1) when the chat does not exist. One round trip per
500 members.

Text: USER SEEN UNREAD. JSON: [{"user":"joe","seen_id":4,"unread":1}].`,
		Example:           `  chatq chat members 1`,
		Args:              cmdutil.ExactArgs(1),
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(chatIDs)),
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
	chats, err := chatClient(f)
	if err != nil {
		return err
	}
	ms, err := chats.Members(ctx, opts.name)
	if err != nil {
		return chatError(err, opts.name, "USER")
	}
	if f.JSON() {
		return f.IO.WriteJSON(ms)
	}
	t := f.IO.NewTable("USER", "SEEN", "UNREAD")
	for _, m := range ms {
		t.Row(m.User, m.SeenID, m.Unread)
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
with -o json) and exits 0, or 3 with -e. A chat that cannot be read (a key
of the wrong type) is reported on stderr ("error" in JSON), the others are
listed, and the command exits 1.

JSON: [{"chat_id":"1","seen_id":0,"unread":4}].`,
		Example:           `  chatq chat ls jeff`,
		Args:              cmdutil.ExactArgs(1),
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(userNames)),
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
	chats, err := chatClient(f)
	if err != nil {
		return err
	}
	cs, err := chats.UserChats(ctx, opts.name)
	if err != nil {
		return err
	}
	if f.JSON() {
		if err := f.IO.WriteJSON(cs); err != nil {
			return err
		}
	} else {
		t := f.IO.NewTable("CHAT", "UNREAD", "SEEN").WhenEmpty("no chats")
		for _, c := range cs {
			if c.Error == "" {
				t.Row(c.ChatID, c.Unread, c.SeenID)
			}
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	broken := 0
	for _, c := range cs {
		if c.Error != "" {
			broken++
			f.IO.Infof("error: %s", c.Error)
		}
	}
	if broken > 0 {
		return fmt.Errorf("%d chat(s) could not be read (above)", broken)
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
[{"id":1,"ts":1795266822.123,"sender":"joe","message":"…"}].

It reads 500 messages per round trip, so a big chat never blocks the
server. A stored value that is not a message is left out and reported on
stderr (chat and id).`,
		Example:           `  chatq chat history 1 -o json`,
		Args:              cmdutil.ExactArgs(1),
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(chatIDs)),
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
	chats, err := chatClient(f)
	if err != nil {
		return err
	}
	ms, err := chats.History(ctx, opts.name)
	var skipped *chat.SkippedError
	if errors.As(err, &skipped) {
		reportProblems(f, []chat.ChatMessages{{ChatID: opts.name, Skipped: skipped.Skipped}})
	} else if err != nil {
		return chatError(err, opts.name, "USER")
	}
	if f.JSON() {
		if err := f.IO.WriteJSON(ms); err != nil {
			return err
		}
	} else {
		t := f.IO.NewTable("CHAT", "ID", "SENDER", "MESSAGE").WhenEmpty("no messages")
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
