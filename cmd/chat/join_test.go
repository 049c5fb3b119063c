package chat

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
)

func TestJoinLeaveFlags(t *testing.T) {
	for _, name := range []string{"join", "leave"} {
		newCmd := NewCmdJoin
		if name == "leave" {
			newCmd = NewCmdLeave
		}
		for _, tc := range []struct {
			args []string
			want *memberOptions // nil: a usage error
		}{
			{[]string{"1", "sam"}, &memberOptions{Chat: "1", User: "sam"}},
			{[]string{"standup", "team:sam"}, &memberOptions{Chat: "standup", User: "team:sam"}}, // ':' is fine in a user
			{[]string{"a:b", "sam"}, nil},
			{[]string{"1", "s am"}, nil},
			{[]string{"1"}, nil},
			{[]string{"1", "sam", "jo"}, nil},
		} {
			got, err := parse(t, newCmd, append([]string{name}, tc.args...)...)
			if tc.want == nil {
				if !isUsage(err) {
					t.Errorf("%s %q: got %+v, %v; want a usage error", name, tc.args, got, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s %q: %v", name, tc.args, err)
				continue
			}
			got.Client, got.IO = nil, nil
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s %q: got %+v, want %+v", name, tc.args, got, tc.want)
			}
		}
	}
}

func TestJoinLeaveRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		client, chats := clientOn(b)
		for _, m := range modes {
			t.Run(m.name, func(t *testing.T) {
				id := mustCreate(t, chats, "c-"+m.name, "joe", []string{"jeff"}, "one")
				s := newStreams(m.tty, "")
				o := &memberOptions{Output: cmdutil.Output{IO: s.io}, Client: client, Chat: id, User: "sam"}
				if err := joinRun(ctx, o); err != nil {
					t.Fatal(err)
				}
				if err := joinRun(ctx, o); err != nil {
					t.Fatal(err)
				}
				// Chatter on a terminal only, and nothing on stdout.
				want := ""
				if m.tty {
					want = "chatq: sam joined chat " + id + " and will see the messages after 1\nchatq: sam was already in chat " + id + "\n"
				}
				if s.err.String() != want || s.out.Len() != 0 {
					t.Errorf("stdout %q, stderr %q; want stderr %q", s.out, s.err, want)
				}

				s = newStreams(m.tty, "")
				o = &memberOptions{Output: cmdutil.Output{IO: s.io, JSON: true}, Client: client, Chat: id, User: "jeff"}
				if err := joinRun(ctx, o); err != nil {
					t.Fatal(err)
				}
				var joined map[string]any
				if err := json.Unmarshal(s.out.Bytes(), &joined); err != nil {
					t.Fatalf("%q: %v", s.out, err)
				}
				if want := map[string]any{"chat_id": id, "user": "jeff", "joined": false, "seen_id": 0.0}; !reflect.DeepEqual(joined, want) {
					t.Errorf("JSON %v, want %v", joined, want)
				}

				for i, u := range []string{"sam", "jeff", "joe"} {
					s = newStreams(m.tty, "")
					if err := leaveRun(ctx, &memberOptions{Output: cmdutil.Output{IO: s.io, JSON: true}, Client: client, Chat: id, User: u}); err != nil {
						t.Fatal(err)
					}
					var left map[string]any
					if err := json.Unmarshal(s.out.Bytes(), &left); err != nil {
						t.Fatalf("%q: %v", s.out, err)
					}
					if want := map[string]any{"chat_id": id, "user": u, "chat_deleted": i == 2, "stale_entry_removed": false}; !reflect.DeepEqual(left, want) {
						t.Errorf("JSON %v, want %v", left, want)
					}
				}
				// The chat is gone: the hint says how to find one.
				s = newStreams(m.tty, "")
				err := leaveRun(ctx, &memberOptions{Output: cmdutil.Output{IO: s.io}, Client: client, Chat: id, User: "joe"})
				if !errors.Is(err, chat.ErrChatNotFound) || !strings.Contains(hintOf(err), "chatq chat ls joe") {
					t.Errorf("leave of a deleted chat: %v (hint %q)", err, hintOf(err))
				}
			})
		}
	})
}
