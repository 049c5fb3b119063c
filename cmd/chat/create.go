package chat

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/spf13/cobra"
)

type createOptions struct {
	cmdutil.Output
	Client func() (*chat.Client, error) // built when the run calls it

	From string
	To   []string
	ID   string
	// Message is the MESSAGE argument, nil when there is none; "-" is read
	// from stdin by the run.
	Message *string
	// Timeout (--timeout) bounds the repeats of a create whose reply was
	// lost (conn.Repeat); the create carries a token, so a repeat is safe.
	Timeout time.Duration
}

// NewCmdCreate returns `chatq chat create` (runF: see cmdutil.RunWith).
func NewCmdCreate(f *cmdutil.Factory, runF func(context.Context, *createOptions) error) *cobra.Command {
	opts := &createOptions{}
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

JSON: {"chat_id":"1","message_id":1}; message_id is null when no message
was sent.

A create carries a token: when its reply is lost it is sent again within
--timeout, and the server answers the repeat with the first create's chat
(kept 10 minutes; an automatic id is taken once) and makes nothing more.
When every repeat fails it exits 4: the chat may exist.`,
		Example: `  chatq chat create --from joe --to jeff,jenny 'message 1'
  chatq chat create --from joe --to jeff --id standup
  git log -1 | chatq chat create --from ci --to joe,jeff -`,
		Args:              cmdutil.RangeArgs(0, 1),
		ValidArgsFunction: cmdutil.CompleteNothing,
		RunE: cmdutil.RunWith(f, opts, runF, createRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			if len(args) == 1 {
				opts.Message = &args[0]
			}
			opts.Client = chatClient(f)
			if cfg := f.Config(); cfg != nil {
				opts.Timeout = cfg.Timeout
			}
			return nil, opts.validate()
		}),
	}
	cmd.Flags().StringVar(&opts.From, "from", "", "the user creating the chat, a member too (required)")
	cmd.Flags().StringSliceVar(&opts.To, "to", nil, "the other members, comma-separated or repeated (required)")
	cmd.Flags().StringVar(&opts.ID, "id", "", "chat id (default: the next number from ids:chat:)")
	_ = cmd.MarkFlagRequired("from")
	_ = cmd.MarkFlagRequired("to")
	cmdutil.MarkWrite(cmd, "chatq chat ls USER")
	return cmd
}

// validate checks the names as pkg/chat does, and that --to names someone
// besides the sender, before the message is read or anything is sent.
func (o *createOptions) validate() error {
	if err := names.User(o.From); err != nil {
		return err
	}
	others := 0
	for _, u := range o.To {
		if err := names.User(u); err != nil {
			return err
		}
		if u != o.From {
			others++
		}
	}
	if others == 0 {
		return cmdutil.WithHint(cmdutil.UsageErrorf("--to %q names no recipient other than --from %s", strings.Join(o.To, ","), o.From),
			"give the other members: --to jeff,jenny (the sender is a member anyway)")
	}
	if o.ID != "" {
		return names.Chat(o.ID)
	}
	return nil
}

type chatCreateResult struct {
	ChatID    string `json:"chat_id"`
	MessageID *int64 `json:"message_id"` // null: no message sent
}

func createRun(ctx context.Context, o *createOptions) error {
	// One token for every try: a repeat after a lost reply returns the
	// first create's chat and makes nothing more.
	req := chat.CreateRequest{From: o.From, To: o.To, ID: o.ID, Token: rand.Text()}
	if o.Message != nil {
		msg, err := readMessage(ctx, o.IO, *o.Message)
		if err != nil {
			return err
		}
		req.Message = &msg
	}
	chats, err := o.Client()
	if err != nil {
		return err
	}
	var c *chat.Created
	err = conn.Repeat(ctx, o.Timeout, func(ctx context.Context) (err error) {
		c, err = chats.Create(ctx, req)
		return err
	})
	if err != nil {
		return chatError(err, o.ID, o.From)
	}
	if o.JSON {
		res := chatCreateResult{ChatID: c.ChatID}
		if c.MessageID != 0 {
			res.MessageID = &c.MessageID
		}
		return o.IO.WriteJSON(res)
	}
	fmt.Fprintln(o.IO.Out, c.ChatID)
	return nil
}
