// Package chat holds the `chatq chat` commands: thin wrappers that parse
// flags, call pkg/chat and print.
package chat

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
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
		NewCmdCreate(f, nil),
		NewCmdSend(f, nil),
		NewCmdPending(f, nil),
		NewCmdJoin(f, nil),
		NewCmdLeave(f, nil),
		NewCmdMembers(f, nil),
		NewCmdLs(f, nil),
		NewCmdHistory(f, nil),
		NewCmdWatch(f, nil),
	)
	f.CompleteFlagValues(cmd, cmdutil.PagedLister(chatIDs), "chat")
	f.CompleteFlagValues(cmd, cmdutil.PagedLister(userNames), "from", "to")
	return cmd
}

// chatClient returns the constructor of the chat client on the configured
// server and prefix; the client is built when a run calls it.
func chatClient(f *cmdutil.Factory) func() (*chat.Client, error) {
	return func() (*chat.Client, error) {
		c, err := f.Client()
		if err != nil {
			return nil, err
		}
		return chat.New(c, chat.Options{Prefix: f.Prefix()}), nil
	}
}

// chatIDs pages through the chats on the server, for shell completion.
func chatIDs(f *cmdutil.Factory) (cmdutil.Pager, error) {
	chats, err := chatClient(f)()
	if err != nil {
		return nil, err
	}
	return chats.Chats, nil
}

// userNames pages through the users on the server, for shell completion.
func userNames(f *cmdutil.Factory) (cmdutil.Pager, error) {
	chats, err := chatClient(f)()
	if err != nil {
		return nil, err
	}
	return chats.Users, nil
}

// readMessage returns the message argument, or stdin when it is "-".
func readMessage(ctx context.Context, ios *iostreams.IOStreams, arg string) (string, error) {
	if arg != "-" {
		return arg, nil
	}
	ios.NoteStdin("the message")
	// One byte past the limit is enough to refuse it: a huge stdin is
	// neither read whole nor sent.
	b, err := io.ReadAll(io.LimitReader(iostreams.Interruptible(ctx, ios.In), chat.MaxMessageBytes+1))
	if ctx.Err() != nil {
		ios.Infof("nothing was sent: interrupted while reading the message from stdin; run the command again")
		return "", ctx.Err()
	}
	if err != nil {
		return "", fmt.Errorf("reading the message from stdin: %w", err)
	}
	if len(b) > chat.MaxMessageBytes {
		return "", chatError(fmt.Errorf("the message on stdin is over %d bytes: %w", chat.MaxMessageBytes, chat.ErrMessageTooLong), "", "")
	}
	return iostreams.TrimLineEnding(string(b)), nil
}

// chatError adds the exit code and a hint to the errors of pkg/chat.
func chatError(err error, chatID, user string) error {
	switch {
	case errors.Is(err, chat.ErrMessageTooLong):
		return cmdutil.WithHint(cmdutil.UsageErr(err), fmt.Sprintf("a chat message holds at most %d KiB (each member reads it): send a larger payload by reference, a URL or a key", chat.MaxMessageBytes>>10))
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

// reportProblems writes the chats that could not be read and the stored
// values that are not messages to stderr, and returns how many chats
// could not be read.
func reportProblems(ios *iostreams.IOStreams, got []chat.ChatMessages) int {
	broken := 0
	for _, c := range got {
		if c.Error != "" {
			broken++
			ios.Infof("error: %s", c.Error)
			ios.Infof("hint: see the chat's keys with `redis-cli TYPE` (docs/chat.md, Repairs); nothing of chat %s was marked seen", c.ChatID)
		}
		for _, sk := range c.Skipped {
			ios.Infof("warning: chat %s: message %d is not a chat message, skipped: %s", c.ChatID, sk.ID, sk.Error)
		}
	}
	return broken
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
