package chat

import (
	"context"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/names"
	"github.com/spf13/cobra"
)

type chatMemberOptions struct {
	f      *cmdutil.Factory
	chatID string
	user   string
}

// memberArgs validates CHAT USER.
func memberArgs(opts *chatMemberOptions, args []string) error {
	opts.chatID, opts.user = args[0], args[1]
	if err := names.Chat(opts.chatID); err != nil {
		return err
	}
	return names.User(opts.user)
}

func newChatJoinCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &chatMemberOptions{f: f}
	return &cobra.Command{
		Use:   "join CHAT USER",
		Short: "Add a user to a chat; they see only messages sent from now on",
		Long: `Add USER to the chat. USER sees only the messages sent after joining.
Joining a chat one is already in changes nothing. Fails (exit 1), writing
nothing, when the chat does not exist.

JSON: {"chat_id":"1","user":"sam","joined":true,"seen_id":4}; joined is
false when USER was already a member.`,
		Example: `  chatq chat join 1 sam
  chatq chat join standup sam -o json`,
		Args:              cmdutil.ExactArgs(2),
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(chatIDs)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := memberArgs(opts, args); err != nil {
				return err
			}
			return chatJoinRun(cmd.Context(), opts)
		},
	}
}

type chatJoinResult struct {
	ChatID string `json:"chat_id"`
	User   string `json:"user"`
	Joined bool   `json:"joined"`
	SeenID int64  `json:"seen_id"`
}

func chatJoinRun(ctx context.Context, opts *chatMemberOptions) error {
	f := opts.f
	chats, err := chatClient(f)
	if err != nil {
		return err
	}
	j, err := chats.Join(ctx, opts.chatID, opts.user)
	if err != nil {
		return chatError(err, opts.chatID, opts.user)
	}
	if f.JSON() {
		return f.IO.WriteJSON(chatJoinResult{ChatID: opts.chatID, User: opts.user, Joined: j.Added, SeenID: j.SeenID})
	}
	if f.IO.ErrTTY {
		if j.Added {
			f.IO.Infof("%s joined chat %s and will see the messages after %d", opts.user, opts.chatID, j.SeenID)
		} else {
			f.IO.Infof("%s was already in chat %s", opts.user, opts.chatID)
		}
	}
	return nil
}

func newChatLeaveCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &chatMemberOptions{f: f}
	return &cobra.Command{
		Use:   "leave CHAT USER",
		Short: "Remove a user from a chat; the last one out deletes it",
		Long: `Remove USER from the chat. The messages the other members have not seen
stay; those every remaining member has seen are deleted. When the last member
leaves, the chat's keys are deleted (the ids:chat: counter stays).

Fails (exit 1), writing nothing, when the chat does not exist or USER is
not a member; but when USER's chat list (seen:{USER}) still names the chat
(a stale entry, left by a join racing a leave on a cluster), that entry is
removed and leave succeeds, saying so.
JSON: {"chat_id":"1","user":"sam","chat_deleted":false} (and
"stale_entry_removed":true for a stale entry).`,
		Example:           `  chatq chat leave 1 sam`,
		Args:              cmdutil.ExactArgs(2),
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(chatIDs)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := memberArgs(opts, args); err != nil {
				return err
			}
			return chatLeaveRun(cmd.Context(), opts)
		},
	}
}

type chatLeaveResult struct {
	ChatID            string `json:"chat_id"`
	User              string `json:"user"`
	ChatDeleted       bool   `json:"chat_deleted"`
	StaleEntryRemoved bool   `json:"stale_entry_removed,omitempty"`
}

func chatLeaveRun(ctx context.Context, opts *chatMemberOptions) error {
	f := opts.f
	chats, err := chatClient(f)
	if err != nil {
		return err
	}
	l, err := chats.Leave(ctx, opts.chatID, opts.user)
	if err != nil {
		return chatError(err, opts.chatID, opts.user)
	}
	if l.StaleEntryRemoved {
		f.IO.Infof("%s was not in chat %s; removed the chat from %s's chat list, which still named it", opts.user, opts.chatID, opts.user)
	}
	if f.JSON() {
		return f.IO.WriteJSON(chatLeaveResult{ChatID: opts.chatID, User: opts.user, ChatDeleted: l.ChatDeleted,
			StaleEntryRemoved: l.StaleEntryRemoved})
	}
	if l.StaleEntryRemoved {
		return nil
	}
	if f.IO.ErrTTY {
		f.IO.Infof("%s left chat %s", opts.user, opts.chatID)
		if l.ChatDeleted {
			f.IO.Infof("chat %s had no members left and was deleted", opts.chatID)
		}
	}
	return nil
}
