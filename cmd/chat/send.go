package chat

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/spf13/cobra"
)

type sendOptions struct {
	cmdutil.Output
	Client func() (*chat.Client, error) // built when the run calls it

	Chat string
	From string
	// Message is the MESSAGE argument; "-" is read from stdin by the run.
	Message string
	// Timeout (--timeout) bounds the repeats of a send whose reply was
	// lost (conn.Repeat); the send carries a token, so a repeat is safe.
	Timeout time.Duration
}

// NewCmdSend returns `chatq chat send` (runF: see cmdutil.RunWith).
func NewCmdSend(f *cmdutil.Factory, runF func(context.Context, *sendOptions) error) *cobra.Command {
	opts := &sendOptions{}
	cmd := &cobra.Command{
		Use:   "send CHAT --from USER MESSAGE|-",
		Short: "Send a message to a chat",
		Long: `Send MESSAGE (or '-' to read it from stdin) to the chat as USER and print
its id. The id comes from the chat's counter and the message is stored in
one atomic step, so concurrent senders never share an id.

Fails (exit 1) when the chat does not exist or USER is not a member; nothing
is written then. JSON: {"chat_id":"1","message_id":5}.

A send carries a token: when its reply is lost it is sent again within
--timeout, and the server answers the repeat with the first send's id
(kept 10 minutes) and stores nothing more. When every repeat fails it
exits 4: the message may be stored.`,
		Example: `  chatq chat send 1 --from joe 'message 2'
  printf 'two\nlines' | chatq chat send 1 --from jeff -`,
		Args:              cmdutil.ExactArgs(2),
		ValidArgsFunction: f.CompleteFirstArg(cmdutil.PagedLister(chatIDs)),
		RunE: cmdutil.RunWith(f, opts, runF, sendRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Chat, opts.Message = args[0], args[1]
			opts.Client = chatClient(f)
			if cfg := f.Config(); cfg != nil {
				opts.Timeout = cfg.Timeout
			}
			return nil, opts.validate()
		}),
	}
	cmd.Flags().StringVar(&opts.From, "from", "", "the sending member (required)")
	_ = cmd.MarkFlagRequired("from")
	cmdutil.MarkWrite(cmd, "chatq chat history CHAT")
	return cmd
}

// validate checks the names as pkg/chat does, before the message is read.
func (o *sendOptions) validate() error {
	if err := names.Chat(o.Chat); err != nil {
		return err
	}
	return names.User(o.From)
}

type chatSendResult struct {
	ChatID    string `json:"chat_id"`
	MessageID int64  `json:"message_id"`
}

func sendRun(ctx context.Context, o *sendOptions) error {
	msg, err := readMessage(ctx, o.IO, o.Message)
	if err != nil {
		return err
	}
	chats, err := o.Client()
	if err != nil {
		return err
	}
	// One token for every try: a repeat after a lost reply returns the
	// first send's id and stores nothing more.
	opt := chat.SendOptions{Token: rand.Text()}
	var id int64
	var tries conn.Tries
	err = conn.Repeat(ctx, o.Timeout, func(ctx context.Context) (err error) {
		opt.FirstTry = tries.First()
		id, err = chats.SendWith(ctx, o.Chat, o.From, msg, opt)
		return err
	})
	if err != nil {
		return chatError(err, o.Chat, o.From)
	}
	if o.JSON {
		return o.IO.WriteJSON(chatSendResult{ChatID: o.Chat, MessageID: id})
	}
	fmt.Fprintln(o.IO.Out, id)
	return nil
}
