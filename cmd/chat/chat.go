// Package chat holds the `chatq chat` commands: thin wrappers that parse
// flags, call pkg/chat and print.
package chat

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/spf13/cobra"
)

const chatLong = `Group chat inboxes that work while recipients are offline: the
multiple-recipient messaging of "Redis in Action" §6.5.2.

A chat has members; each message gets the next id of its chat. A member
fetches what they have not seen with 'pending', which then marks it seen; a
message is deleted once every member has seen it. Keys (behind --prefix):
chat:{ID}, msgs:{ID}, ids:{ID}, seen:{USER}, ids:chat: (see docs/keys.md).

A message is an argument, or '-' to read it from stdin byte for byte
(a trailing newline is kept). Chat ids and user names must be non-empty,
without whitespace, control characters, '{' or '}'; chat ids also without
':'. A bad name exits 2 before anything is sent to Redis.`

func NewCmd(f *cmdutil.Factory) *cobra.Command {
	cmd := cmdutil.NewGroupCmd("chat", "Group chat inboxes that work while recipients are offline", chatLong)
	cmd.Example = `  chatq chat create --from joe --to jeff,jenny 'lunch at noon?'
  chatq chat send 1 --from jeff 'yes'
  chatq chat pending jenny
  chatq chat watch joe -o json`
	cmd.AddCommand(
		newChatCreateCmd(f),
		newChatSendCmd(f),
		newChatPendingCmd(f),
		newChatJoinCmd(f),
		newChatLeaveCmd(f),
		newChatMembersCmd(f),
		newChatLsCmd(f),
		newChatHistoryCmd(f),
		newChatWatchCmd(f),
	)
	// A lost reply to these exits 4 ("may have applied"), with the command
	// that shows whether it was.
	for name, check := range map[string]string{
		"create":  "chatq chat ls USER",
		"send":    "chatq chat history CHAT",
		"pending": "chatq chat pending USER --peek",
		"join":    "chatq chat members CHAT",
		"leave":   "chatq chat members CHAT",
	} {
		cmdutil.MarkWriteSub(cmd, name, check)
	}
	f.CompleteFlagValues(cmd, cmdutil.PagedLister(chatIDs), "chat")
	f.CompleteFlagValues(cmd, cmdutil.PagedLister(userNames), "from", "to")
	return cmd
}

// chatClient builds the chat client on the configured server and prefix.
func chatClient(f *cmdutil.Factory) (*chat.Client, error) {
	c, err := f.Client()
	if err != nil {
		return nil, err
	}
	return chat.New(c, chat.Options{Prefix: f.Prefix()}), nil
}

// chatIDs pages through the chats on the server, for shell completion.
func chatIDs(f *cmdutil.Factory) (cmdutil.Pager, error) {
	chats, err := chatClient(f)
	if err != nil {
		return nil, err
	}
	return chats.Chats, nil
}

// userNames pages through the users on the server, for shell completion.
func userNames(f *cmdutil.Factory) (cmdutil.Pager, error) {
	chats, err := chatClient(f)
	if err != nil {
		return nil, err
	}
	return chats.Users, nil
}

// readMessage returns the message argument, or stdin when it is "-".
func readMessage(f *cmdutil.Factory, arg string) (string, error) {
	if arg != "-" {
		return arg, nil
	}
	f.IO.NoteStdin("the message")
	b, err := io.ReadAll(f.IO.In)
	if err != nil {
		return "", fmt.Errorf("reading the message from stdin: %w", err)
	}
	return string(b), nil
}

// chatError adds the exit code and a hint to the errors of pkg/chat.
func chatError(err error, chatID, user string) error {
	switch {
	case errors.Is(err, chat.ErrInvalidMessage):
		return cmdutil.WithHint(cmdutil.UsageErr(err), "messages are stored as JSON text: send binary data base64-encoded")
	case errors.Is(err, chat.ErrChatNotFound):
		return cmdutil.WithHint(err, fmt.Sprintf("list %s's chats with `chatq chat ls %s`, or create one with `chatq chat create`", user, user))
	case errors.Is(err, chat.ErrNotMember):
		return cmdutil.WithHint(err, fmt.Sprintf("see the members with `chatq chat members %s`; add one with `chatq chat join %s USER`", chatID, chatID))
	case errors.Is(err, chat.ErrChatExists):
		return cmdutil.WithHint(err, "leave out --id to take the next free chat id")
	}
	return err
}

// messageLine is a message in text output and in JSON Lines (watch).
type messageLine struct {
	ChatID string `json:"chat_id"`
	chat.Message
}

func (m messageLine) cells() []any {
	return []any{m.ChatID, m.ID, m.Sender, m.Message.Message}
}

// writeMessageText prints messages one per line, tab-separated, with tabs
// and newlines in them escaped as in a table.
func writeMessageText(w io.Writer, lines []messageLine, tty bool) {
	esc := iostreams.CellEscaper.Replace
	if tty {
		esc = iostreams.TerminalSafe
	}
	for _, l := range lines {
		parts := []string{l.ChatID, strconv.FormatInt(l.ID, 10), esc(l.Sender), esc(l.Message.Message)}
		fmt.Fprintln(w, strings.Join(parts, "\t"))
	}
}

func flatten(cs []chat.ChatMessages) []messageLine {
	var out []messageLine
	for _, c := range cs {
		for _, m := range c.Messages {
			out = append(out, messageLine{ChatID: c.ChatID, Message: m})
		}
	}
	return out
}
