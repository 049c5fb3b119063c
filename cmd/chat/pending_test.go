package chat

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
)

func TestPendingFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *pendingOptions // nil: a usage error
	}{
		{[]string{"jeff"}, &pendingOptions{User: "jeff"}},
		{[]string{"jeff", "--peek"}, &pendingOptions{User: "jeff", Peek: true}},
		{[]string{"--chat", "1", "jeff"}, &pendingOptions{User: "jeff", Chat: "1", ChatGiven: true}},
		{[]string{"jeff", "--chat", ""}, nil}, // not "all chats"
		{[]string{"jeff", "--chat", "a:b"}, nil},
		{[]string{"je ff"}, nil},
		{[]string{}, nil},
		{[]string{"jeff", "--peak"}, nil},
	} {
		got, err := parse(t, NewCmdPending, append([]string{"pending"}, tc.args...)...)
		if tc.want == nil {
			if !isUsage(err) {
				t.Errorf("%q: got %+v, %v; want a usage error", tc.args, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		got.Client, got.IO = nil, nil
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

func TestPendingRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		client, chats := clientOn(b)
		for _, m := range modes {
			t.Run(m.name, func(t *testing.T) {
				u := "jeff-" + m.name
				id := mustCreate(t, chats, "", "joe", []string{u}, "one\nline")

				// --peek prints and marks nothing.
				s := newStreams(m.tty, "")
				if err := pendingRun(ctx, &pendingOptions{Output: cmdutil.Output{IO: s.io}, Client: client, User: u, Peek: true}); err != nil {
					t.Fatal(err)
				}
				want := id + "\t1\tjoe\tone\\nline\n"
				if m.tty {
					want = "CHAT  ID  SENDER  MESSAGE\n" + id + "     1   joe     one\\nline\n"
				}
				if s.out.String() != want {
					t.Errorf("printed %q, want %q", s.out, want)
				}

				// Then JSON, marking what it printed.
				s = newStreams(m.tty, "")
				if err := pendingRun(ctx, &pendingOptions{Output: cmdutil.Output{IO: s.io, JSON: true}, Client: client, User: u, Chat: id, ChatGiven: true}); err != nil {
					t.Fatal(err)
				}
				var got []chat.ChatMessages
				if err := json.Unmarshal(s.out.Bytes(), &got); err != nil || len(got) != 1 || got[0].ChatID != id ||
					len(got[0].Messages) != 1 || got[0].Messages[0].Message != "one\nline" {
					t.Errorf("JSON %q: %+v, %v", s.out, got, err)
				}

				// Nothing left: [] and ErrNothing (exit 3 with -e).
				s = newStreams(m.tty, "")
				err := pendingRun(ctx, &pendingOptions{Output: cmdutil.Output{IO: s.io, JSON: true}, Client: client, User: u})
				if !errors.Is(err, cmdutil.ErrNothing) || s.out.String() != "[]\n" {
					t.Errorf("second pending: %v, printed %q", err, s.out)
				}

				// --chat of a chat the user is not in: the hint names members.
				err = pendingRun(ctx, &pendingOptions{Output: cmdutil.Output{IO: s.io}, Client: client, User: "sam", Chat: id, ChatGiven: true})
				if !errors.Is(err, chat.ErrNotMember) || hintOf(err) == "" {
					t.Errorf("pending of another's chat: %v (hint %q)", err, hintOf(err))
				}
			})
		}
	})
}
