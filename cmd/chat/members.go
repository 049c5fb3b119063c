package chat

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/cli/search"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/spf13/cobra"
)

// chatOptions are the options of members and history (with its search),
// which read a chat.
type chatOptions struct {
	cmdutil.Output
	Client func() (*chat.Client, error) // built when the run calls it

	Chat string
}

// bind reads CHAT into the options and checks it as pkg/chat does.
func (o *chatOptions) bind(f *cmdutil.Factory, args []string) error {
	o.Client, o.Chat = chatClient(f), args[0]
	return o.validate()
}

func (o *chatOptions) validate() error { return names.Chat(o.Chat) }

// NewCmdMembers returns `chatq chat members` (runF: see cmdutil.RunWith).
func NewCmdMembers(f *cmdutil.Factory, runF func(context.Context, *chatOptions) error) *cobra.Command {
	opts := &chatOptions{}
	cmd := &cobra.Command{
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
		RunE: cmdutil.RunWith(f, opts, runF, membersRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			return nil, opts.bind(f, args)
		}),
	}
	return cmdutil.MarkRead(cmd)
}

func membersRun(ctx context.Context, o *chatOptions) error {
	chats, err := o.Client()
	if err != nil {
		return err
	}
	ms, err := chats.Members(ctx, o.Chat)
	if err != nil {
		return chatError(err, o.Chat, "USER")
	}
	if o.JSON {
		return o.IO.WriteJSON(ms)
	}
	t := o.IO.NewTable("USER", "SEEN", "UNREAD")
	for _, m := range ms {
		t.Row(m.User, m.SeenID, m.Unread)
	}
	return t.Flush()
}

type lsOptions struct {
	cmdutil.Output
	Client func() (*chat.Client, error) // built when the run calls it

	User string
}

func (o *lsOptions) validate() error { return names.User(o.User) }

// NewCmdLs returns `chatq chat ls` (runF: see cmdutil.RunWith).
func NewCmdLs(f *cmdutil.Factory, runF func(context.Context, *lsOptions) error) *cobra.Command {
	opts := &lsOptions{}
	cmd := &cobra.Command{
		Use:   "ls USER | --all",
		Short: "List a user's chats with their unread counts, or every chat (--all)",
		Long: `List the chats USER is a member of, with the number of messages USER has
not seen and the last message id USER has seen. No chats prints nothing ([]
with -o json) and exits 0, or 3 with -e. A chat that cannot be read (a key
of the wrong type) is reported on stderr ("error" in JSON), the others are
listed, and the command exits 1.

JSON: [{"chat_id":"1","seen_id":0,"unread":4}].

--all lists every chat under --prefix instead, by id, found with SCAN in
bounded calls (COUNT 500, node by node on a Cluster); JSON
[{"chat_id":"1"}].`,
		Example: `  chatq chat ls jeff
  chatq chat ls --all
  chatq chat ls --all --jq '.[].chat_id' | xargs -n1 chatq chat members`,
		Args: func(cmd *cobra.Command, args []string) error {
			all, _ := cmd.Flags().GetBool("all")
			switch {
			case all && len(args) > 0:
				return cmdutil.UsageErrorf("give a user or --all, not both")
			case !all && len(args) != 1:
				return cmdutil.WithHint(cmdutil.UsageErrorf("chat ls wants a user"), "chatq chat ls USER lists a user's chats; chatq chat ls --all every chat")
			}
			return nil
		},
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(userNames)),
		RunE: cmdutil.RunWith(f, opts, runF, lsRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			if all, _ := cmd.Flags().GetBool("all"); all {
				return func(ctx context.Context) error { return allChatsRun(ctx, opts.IO, opts.JSON, chatClient(f)) }, nil
			}
			opts.Client, opts.User = chatClient(f), args[0]
			return nil, opts.validate()
		}),
	}
	cmd.Flags().Bool("all", false, "list every chat, by id, instead of a user's")
	return cmdutil.MarkRead(cmd)
}

// allChatsRun prints every chat's id, sorted, walking pkg/chat's listing
// (SCAN pages) to its end.
func allChatsRun(ctx context.Context, ios *iostreams.IOStreams, json bool, client func() (*chat.Client, error)) error {
	c, err := client()
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var cursor uint64
	for {
		page, next, err := c.Chats(ctx, cursor, "", 500)
		if err != nil {
			return err
		}
		for _, id := range page {
			seen[id] = true
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	ids := slices.SortedFunc(maps.Keys(seen), func(a, b string) int {
		// Numeric ids in numeric order, then the others.
		na, ea := strconv.ParseInt(a, 10, 64)
		nb, eb := strconv.ParseInt(b, 10, 64)
		switch {
		case ea == nil && eb == nil:
			return cmp.Compare(na, nb)
		case ea == nil:
			return -1
		case eb == nil:
			return 1
		}
		return cmp.Compare(a, b)
	})
	type row struct {
		ChatID string `json:"chat_id"`
	}
	rows := make([]row, len(ids))
	for i, id := range ids {
		rows[i] = row{id}
	}
	if json {
		if err := ios.WriteJSON(rows); err != nil {
			return err
		}
	} else {
		t := ios.NewTable("CHAT").WhenEmpty("no chats")
		for _, r := range rows {
			t.Row(r.ChatID)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if len(rows) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}

func lsRun(ctx context.Context, o *lsOptions) error {
	chats, err := o.Client()
	if err != nil {
		return err
	}
	cs, err := chats.UserChats(ctx, o.User)
	if err != nil {
		return err
	}
	if o.JSON {
		if err := o.IO.WriteJSON(cs); err != nil {
			return err
		}
	} else {
		// The columns of chat members, and of the JSON: name, seen, unread.
		t := o.IO.NewTable("CHAT", "SEEN", "UNREAD").WhenEmpty("no chats")
		for _, c := range cs {
			if c.Error == "" {
				t.Row(c.ChatID, c.SeenID, c.Unread)
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
			o.IO.Infof("error: %s", c.Error)
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

// historyOptions are chat history's: the chat, and what to search for.
type historyOptions struct {
	chatOptions
	Search search.Flags
	// grep and re are Search compiled (validate).
	grep string
	re   *regexp.Regexp
}

func (o *historyOptions) validate() error {
	if err := o.chatOptions.validate(); err != nil {
		return err
	}
	var err error
	o.grep, o.re, err = o.Search.Compile()
	return err
}

// NewCmdHistory returns `chatq chat history` (runF: see cmdutil.RunWith).
func NewCmdHistory(f *cmdutil.Factory, runF func(context.Context, *historyOptions) error) *cobra.Command {
	opts := &historyOptions{}
	cmd := &cobra.Command{
		Use:   "history CHAT [--grep PATTERN [--regexp]]",
		Short: "Show the messages a chat still stores, or those that match",
		Long: `Show the messages the chat still stores, oldest first: those some member
has not seen yet (the others are deleted). Reads only. Fails (exit 1) when
the chat does not exist; no stored messages prints nothing ([] with -o
json) and exits 0, or 3 with -e.

--grep PATTERN keeps only the messages whose text contains PATTERN (a
plain, case-sensitive substring of the text as it was sent); with
--regexp, PATTERN is a regular expression (Go's RE2 syntax). Matching is
done here, on each chunk as it is read; stderr then says how many
messages were examined and how many matched. No match is "nothing to
return" (exit 0, or 3 with -e).

Text: chat id, message id, sender, message per line. JSON:
[{"id":1,"ts":1795266822.123,"sender":"joe","message":"…"}].

It reads 500 messages per round trip, so a big chat never blocks the
server. A stored value that is not a message is left out and reported on
stderr (chat and id).`,
		Example: `  chatq chat history 1 -o json
  chatq chat history 1 --grep 'order 4711'
  chatq chat history 1 --grep '(?i)^deploy(ed)? v\d+' --regexp`,
		Args:              cmdutil.ExactArgs(1),
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(chatIDs)),
		RunE: cmdutil.RunWith(f, opts, runF, historyRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Client, opts.Chat = chatClient(f), args[0]
			return nil, opts.validate()
		}),
	}
	opts.Search.Add(cmd.Flags(), "text")
	return cmdutil.MarkRead(cmd)
}

func historyRun(ctx context.Context, o *historyOptions) error {
	chats, err := o.Client()
	if err != nil {
		return err
	}
	examined := 0
	ms, err := chats.History(ctx, o.Chat, chat.HistoryOptions{Grep: o.grep, Regexp: o.re, Progress: func(n, _ int) { examined = n }})
	var skipped *chat.SkippedError
	if errors.As(err, &skipped) {
		reportProblems(o.IO, []chat.ChatMessages{{ChatID: o.Chat, Skipped: skipped.Skipped}})
	} else if err != nil {
		return chatError(err, o.Chat, "USER")
	}
	if o.JSON {
		if err := o.IO.WriteJSON(ms); err != nil {
			return err
		}
	} else {
		t := o.IO.NewTable("CHAT", "ID", "SENDER", "MESSAGE").WhenEmpty("no messages")
		for _, m := range flatten([]chat.ChatMessages{{ChatID: o.Chat, Messages: ms}}) {
			t.Row(m.cells()...)
		}
		if err := t.Flush(); err != nil {
			return err
		}
	}
	if o.Search.Given() {
		search.Report(o.IO, examined, len(ms))
	}
	if len(ms) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}
