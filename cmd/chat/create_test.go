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

func TestCreateFlags(t *testing.T) {
	msg, dash := "hi there", "-"
	for _, tc := range []struct {
		args []string
		want *createOptions // nil: a usage error
	}{
		{[]string{"--from", "joe", "--to", "jeff,jenny", "hi there"}, &createOptions{From: "joe", To: []string{"jeff", "jenny"}, Message: &msg}},
		{[]string{"--from", "joe", "--to", "jeff", "--to", "joe", "--id", "standup"}, &createOptions{From: "joe", To: []string{"jeff", "joe"}, ID: "standup"}},
		{[]string{"--from", "ci", "--to", "joe", "-"}, &createOptions{From: "ci", To: []string{"joe"}, Message: &dash}},
		{[]string{"--from", "joe", "--to", "joe"}, nil},   // no one besides the sender
		{[]string{"--from", "joe", "--to", ""}, nil},      // likewise
		{[]string{"--from", "jo e", "--to", "jeff"}, nil}, // a bad user
		{[]string{"--from", "joe", "--to", "je{ff"}, nil}, // likewise
		{[]string{"--from", "joe", "--to", "jeff", "--id", "a:b"}, nil},
		{[]string{"--from", "joe", "a"}, nil}, // --to is required
		{[]string{"--from", "joe", "--to", "jeff", "a", "b"}, nil},
	} {
		got, err := parse(t, NewCmdCreate, append([]string{"create"}, tc.args...)...)
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
		if got.Client == nil || got.IO == nil {
			t.Errorf("%q: no client constructor or streams", tc.args)
		}
		got.Client, got.IO = nil, nil
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

func TestCreateRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		client, chats := clientOn(b)
		for _, m := range modes {
			t.Run(m.name, func(t *testing.T) {
				// The message from stdin, byte for byte but its final line
				// ending (iostreams.TrimLineEnding): text prints the id.
				s := newStreams(m.tty, "two\nlines\n")
				dash := "-"
				o := &createOptions{Output: cmdutil.Output{IO: s.io}, Client: client, From: "joe", To: []string{"jeff"}, Message: &dash}
				if err := createRun(ctx, o); err != nil {
					t.Fatal(err)
				}
				id := strings.TrimSuffix(s.out.String(), "\n")
				ms, err := chats.History(ctx, id, chat.HistoryOptions{})
				if err != nil || len(ms) != 1 || ms[0].Message != "two\nlines" || ms[0].Sender != "joe" {
					t.Fatalf("chat %q holds %+v, %v", id, ms, err)
				}

				// JSON, with an explicit id and no message.
				s = newStreams(m.tty, "")
				o = &createOptions{Output: cmdutil.Output{IO: s.io, JSON: true}, Client: client, From: "joe", To: []string{"jeff"}, ID: "standup-" + m.name}
				if err := createRun(ctx, o); err != nil {
					t.Fatal(err)
				}
				var got map[string]any
				if err := json.Unmarshal(s.out.Bytes(), &got); err != nil {
					t.Fatalf("%q: %v", s.out, err)
				}
				if want := map[string]any{"chat_id": "standup-" + m.name, "message_id": nil}; !reflect.DeepEqual(got, want) {
					t.Errorf("JSON %v, want %v", got, want)
				}

				// Again: the chat exists, and the hint says what to do.
				err = createRun(ctx, o)
				if !errors.Is(err, chat.ErrChatExists) || !strings.Contains(hintOf(err), "leave out --id") {
					t.Errorf("second create: %v (hint %q)", err, hintOf(err))
				}
			})
		}
	})
}
