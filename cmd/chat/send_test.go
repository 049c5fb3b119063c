package chat

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
)

func TestSendFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *sendOptions // nil: a usage error
	}{
		{[]string{"1", "--from", "joe", "yes"}, &sendOptions{Chat: "1", From: "joe", Message: "yes"}},
		{[]string{"--from", "jeff", "standup", "-"}, &sendOptions{Chat: "standup", From: "jeff", Message: "-"}},
		{[]string{"1", "--from", "joe", ""}, &sendOptions{Chat: "1", From: "joe"}}, // an empty message is one
		{[]string{"a:b", "--from", "joe", "x"}, nil},
		{[]string{"1", "--from", "", "x"}, nil},
		{[]string{"1", "x"}, nil}, // --from is required
		{[]string{"1", "--from", "joe"}, nil},
	} {
		got, err := parse(t, NewCmdSend, append([]string{"send"}, tc.args...)...)
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

func TestSendRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		client, chats := clientOn(b)
		id := mustCreate(t, chats, "", "joe", []string{"jeff"}, "one")
		for i, m := range modes {
			t.Run(m.name, func(t *testing.T) {
				s := newStreams(m.tty, "kept\n")
				if err := sendRun(ctx, &sendOptions{Output: cmdutil.Output{IO: s.io}, Client: client, Chat: id, From: "jeff", Message: "-"}); err != nil {
					t.Fatal(err)
				}
				want := 2 + 2*i
				if got := s.out.String(); got != strconv.Itoa(want)+"\n" {
					t.Errorf("printed %q, want message id %d", got, want)
				}
				s = newStreams(m.tty, "")
				if err := sendRun(ctx, &sendOptions{Output: cmdutil.Output{IO: s.io, JSON: true}, Client: client, Chat: id, From: "joe", Message: "json"}); err != nil {
					t.Fatal(err)
				}
				var got struct {
					ChatID    string `json:"chat_id"`
					MessageID int64  `json:"message_id"`
				}
				if err := json.Unmarshal(s.out.Bytes(), &got); err != nil || got.ChatID != id || got.MessageID != int64(want+1) {
					t.Errorf("JSON %q: %+v, %v", s.out, got, err)
				}
				// Not a member: the hint names the members command.
				err := sendRun(ctx, &sendOptions{Output: cmdutil.Output{IO: newStreams(m.tty, "").io}, Client: client, Chat: id, From: "sam", Message: "x"})
				if !errors.Is(err, chat.ErrNotMember) || !strings.Contains(hintOf(err), "chatq chat members "+id) {
					t.Errorf("send as a non-member: %v (hint %q)", err, hintOf(err))
				}
			})
		}
		ms, err := chats.History(ctx, id, chat.HistoryOptions{})
		if err != nil || len(ms) != 5 || ms[1].Message != "kept" {
			t.Errorf("history %+v, %v", ms, err)
		}
	})
}
