package chat

import (
	"context"
	"crypto/rand"
	"time"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/spf13/cobra"
)

// memberOptions are the options of join and leave.
type memberOptions struct {
	cmdutil.Output
	Client func() (*chat.Client, error) // built when the run calls it

	Chat string
	User string
	// Timeout (--timeout) bounds the repeats of a join whose reply was
	// lost (conn.Repeat); the join carries a token, so a repeat is safe.
	Timeout time.Duration
}

// bind reads CHAT USER into the options and checks them as pkg/chat does.
func (o *memberOptions) bind(f *cmdutil.Factory, args []string) error {
	o.Client, o.Chat, o.User = chatClient(f), args[0], args[1]
	if cfg := f.Config(); cfg != nil {
		o.Timeout = cfg.Timeout
	}
	return o.validate()
}

func (o *memberOptions) validate() error {
	if err := names.Chat(o.Chat); err != nil {
		return err
	}
	return names.User(o.User)
}

// NewCmdJoin returns `chatq chat join` (runF: see cmdutil.RunWith).
func NewCmdJoin(f *cmdutil.Factory, runF func(context.Context, *memberOptions) error) *cobra.Command {
	opts := &memberOptions{}
	cmd := &cobra.Command{
		Use:   "join CHAT USER",
		Short: "Add a user to a chat; they see only messages sent from now on",
		Long: `Add USER to the chat. USER sees only the messages sent after joining.
Joining a chat one is already in changes nothing. Fails (exit 1), writing
nothing, when the chat does not exist.

JSON: {"chat_id":"1","user":"sam","joined":true,"seen_id":4}; joined is
false when USER was already a member.

A join carries a token: when its reply is lost it is sent again within
--timeout, and the server answers the repeat with the first answer (kept
10 minutes), joined as the first said. When every repeat fails it exits 4:
USER may be a member.`,
		Example: `  chatq chat join 1 sam
  chatq chat join standup sam -o json`,
		Args:              cmdutil.ExactArgs(2),
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(chatIDs)),
		RunE: cmdutil.RunWith(f, opts, runF, joinRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			return nil, opts.bind(f, args)
		}),
	}
	return cmdutil.MarkWrite(cmd, "chatq chat members CHAT")
}

type chatJoinResult struct {
	ChatID string `json:"chat_id"`
	User   string `json:"user"`
	Joined bool   `json:"joined"`
	SeenID int64  `json:"seen_id"`
}

func joinRun(ctx context.Context, o *memberOptions) error {
	chats, err := o.Client()
	if err != nil {
		return err
	}
	// One token for every try: a repeat after a lost reply returns the
	// first join's answer.
	opt := chat.JoinOptions{Token: rand.Text()}
	var j *chat.Joined
	err = conn.Repeat(ctx, o.Timeout, func(ctx context.Context) (err error) {
		j, err = chats.JoinWith(ctx, o.Chat, o.User, opt)
		return err
	})
	if err != nil {
		return chatError(err, o.Chat, o.User)
	}
	if o.JSON {
		return o.IO.WriteJSON(chatJoinResult{ChatID: o.Chat, User: o.User, Joined: j.Added, SeenID: j.SeenID})
	}
	if o.IO.ErrTTY {
		if j.Added {
			o.IO.Infof("%s joined chat %s and will see the messages after %d", o.User, o.Chat, j.SeenID)
		} else {
			o.IO.Infof("%s was already in chat %s", o.User, o.Chat)
		}
	}
	return nil
}

// NewCmdLeave returns `chatq chat leave` (runF: see cmdutil.RunWith).
func NewCmdLeave(f *cmdutil.Factory, runF func(context.Context, *memberOptions) error) *cobra.Command {
	opts := &memberOptions{}
	cmd := &cobra.Command{
		Use:   "leave CHAT USER",
		Short: "Remove a user from a chat; the last one out deletes it",
		Long: `Remove USER from the chat. The messages the other members have not seen
stay; those every remaining member has seen are deleted. When the last member
leaves, the chat's keys are deleted (the ids:chat: counter stays).

Fails (exit 1), writing nothing, when the chat does not exist or USER is
not a member; but when USER's chat list (seen:{USER}) still names the chat
(a stale entry, left by a join racing a leave on a cluster), that entry is
removed and leave succeeds, saying so.
JSON: {"chat_id":"1","user":"sam","chat_deleted":false,"stale_entry_removed":false}
(stale_entry_removed is true for a stale entry).`,
		Example:           `  chatq chat leave 1 sam`,
		Args:              cmdutil.ExactArgs(2),
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(chatIDs)),
		RunE: cmdutil.RunWith(f, opts, runF, leaveRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			return nil, opts.bind(f, args)
		}),
	}
	return cmdutil.MarkWrite(cmd, "chatq chat members CHAT")
}

type chatLeaveResult struct {
	ChatID            string `json:"chat_id"`
	User              string `json:"user"`
	ChatDeleted       bool   `json:"chat_deleted"`
	StaleEntryRemoved bool   `json:"stale_entry_removed"`
}

func leaveRun(ctx context.Context, o *memberOptions) error {
	chats, err := o.Client()
	if err != nil {
		return err
	}
	l, err := chats.Leave(ctx, o.Chat, o.User)
	if err != nil {
		return chatError(err, o.Chat, o.User)
	}
	if l.StaleEntryRemoved {
		o.IO.Infof("%s was not in chat %s; removed the chat from %s's chat list, which still named it", o.User, o.Chat, o.User)
	}
	if o.JSON {
		return o.IO.WriteJSON(chatLeaveResult{ChatID: o.Chat, User: o.User, ChatDeleted: l.ChatDeleted,
			StaleEntryRemoved: l.StaleEntryRemoved})
	}
	if l.StaleEntryRemoved {
		return nil
	}
	if o.IO.ErrTTY {
		o.IO.Infof("%s left chat %s", o.User, o.Chat)
		if l.ChatDeleted {
			o.IO.Infof("chat %s had no members left and was deleted", o.Chat)
		}
	}
	return nil
}
