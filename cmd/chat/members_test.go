package chat

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/search"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
)

func TestReadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the chat or user; "" for a usage error
	}{
		{[]string{"members", "1"}, "1"},
		{[]string{"members", "a:b"}, ""},
		{[]string{"members"}, ""},
		{[]string{"history", "standup"}, "standup"},
		{[]string{"history", "x{y}"}, ""},
		{[]string{"history", "1", "2"}, ""},
		{[]string{"ls", "team:jeff"}, "team:jeff"},
		{[]string{"ls", ""}, ""},
		{[]string{"ls"}, ""},
	} {
		var got string
		var err error
		switch tc.args[0] {
		case "members":
			var o *chatOptions
			if o, err = parse(t, NewCmdMembers, tc.args...); err == nil {
				got = o.Chat
			}
		case "history":
			var o *historyOptions
			if o, err = parse(t, NewCmdHistory, tc.args...); err == nil {
				got = o.Chat
			}
		case "ls":
			var o *lsOptions
			if o, err = parse(t, NewCmdLs, tc.args...); err == nil {
				got = o.User
			}
		}
		if tc.want == "" {
			if !isUsage(err) {
				t.Errorf("%q: got %q, %v; want a usage error", tc.args, got, err)
			}
		} else if err != nil || got != tc.want {
			t.Errorf("%q: got %q, %v; want %q", tc.args, got, err, tc.want)
		}
	}
}

func TestReadRuns(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		client, chats := clientOn(b)
		id := mustCreate(t, chats, "", "joe", []string{"jeff"}, "one\ttab")
		if _, err := chats.Pending(ctx, "joe", chat.PendingOptions{}); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name     string
			run      func(*streams) error
			terminal string
			piped    string
		}{
			{"members", func(s *streams) error {
				return membersRun(ctx, &chatOptions{Output: cmdutil.Output{IO: s.io}, Client: client, Chat: id})
			},
				"USER  SEEN  UNREAD\njeff  0     1\njoe   1     0\n", "jeff\t0\t1\njoe\t1\t0\n"},
			{"ls", func(s *streams) error {
				return lsRun(ctx, &lsOptions{Output: cmdutil.Output{IO: s.io}, Client: client, User: "jeff"})
			},
				"CHAT  SEEN  UNREAD\n" + id + "     0     1\n", id + "\t0\t1\n"},
			{"history", func(s *streams) error {
				return historyRun(ctx, &historyOptions{chatOptions: chatOptions{Output: cmdutil.Output{IO: s.io}, Client: client, Chat: id}})
			},
				"CHAT  ID  SENDER  MESSAGE\n" + id + "     1   joe     one\\ttab\n", id + "\t1\tjoe\tone\\ttab\n"},
		} {
			for _, m := range modes {
				s := newStreams(m.tty, "")
				if err := tc.run(&s); err != nil {
					t.Fatalf("%s, %s: %v", tc.name, m.name, err)
				}
				want := tc.piped
				if m.tty {
					want = tc.terminal
				}
				if s.out.String() != want {
					t.Errorf("%s, %s: printed %q, want %q", tc.name, m.name, s.out, want)
				}
			}
		}

		s := newStreams(false, "")
		if err := membersRun(ctx, &chatOptions{Output: cmdutil.Output{IO: s.io, JSON: true}, Client: client, Chat: id}); err != nil {
			t.Fatal(err)
		}
		var members []chat.Member
		if err := json.Unmarshal(s.out.Bytes(), &members); err != nil || len(members) != 2 || members[0].User != "jeff" || members[0].Unread != 1 {
			t.Errorf("members JSON %q: %+v, %v", s.out, members, err)
		}
		s = newStreams(false, "")
		if err := historyRun(ctx, &historyOptions{chatOptions: chatOptions{Output: cmdutil.Output{IO: s.io, JSON: true}, Client: client, Chat: id}}); err != nil {
			t.Fatal(err)
		}
		var history []chat.Message
		if err := json.Unmarshal(s.out.Bytes(), &history); err != nil || len(history) != 1 || history[0].Message != "one\ttab" {
			t.Errorf("history JSON %q: %+v, %v", s.out, history, err)
		}

		// No chats: [] and ErrNothing (exit 3 with -e); on a terminal
		// "no chats" on stderr.
		s = newStreams(false, "")
		if err := lsRun(ctx, &lsOptions{Output: cmdutil.Output{IO: s.io, JSON: true}, Client: client, User: "nobody"}); !errors.Is(err, cmdutil.ErrNothing) || s.out.String() != "[]\n" {
			t.Errorf("ls of no chats: %v, printed %q", err, s.out)
		}
		s = newStreams(true, "")
		if err := lsRun(ctx, &lsOptions{Output: cmdutil.Output{IO: s.io}, Client: client, User: "nobody"}); !errors.Is(err, cmdutil.ErrNothing) || s.out.Len() != 0 || s.err.String() != "chatq: no chats\n" {
			t.Errorf("ls of no chats: %v, stdout %q, stderr %q", err, s.out, s.err)
		}
		if err := membersRun(ctx, &chatOptions{Output: cmdutil.Output{IO: s.io}, Client: client, Chat: "none"}); !errors.Is(err, chat.ErrChatNotFound) {
			t.Errorf("members of no chat: %v", err)
		}
	})
}

func TestHistorySearchFlags(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		grep  string // the substring; "" with re or none
		re    string // the regular expression
		usage bool
	}{
		{args: []string{"history", "1"}},
		{args: []string{"history", "1", "--grep", "order 4711"}, grep: "order 4711"},
		{args: []string{"history", "1", "--grep", "a.b(", "--regexp=false"}, grep: "a.b("},
		{args: []string{"history", "1", "--grep", `4711\b`, "--regexp"}, re: `4711\b`},
		{args: []string{"history", "1", "--grep", "a.b(", "--regexp"}, usage: true},
		{args: []string{"history", "1", "--regexp"}, usage: true},
	} {
		o, err := parse(t, NewCmdHistory, tc.args...)
		switch {
		case tc.usage:
			if !isUsage(err) {
				t.Errorf("%q: %v, want a usage error", tc.args, err)
			}
		case err != nil:
			t.Errorf("%q: %v", tc.args, err)
		case o.grep != tc.grep || (o.re == nil) != (tc.re == "") || o.re != nil && o.re.String() != tc.re:
			t.Errorf("%q: grep %q, re %v; want %q, %q", tc.args, o.grep, o.re, tc.grep, tc.re)
		}
	}
}

func TestHistorySearchRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		client, chats := clientOn(b)
		id := mustCreate(t, chats, "", "joe", []string{"jeff"}, "order 4711 shipped")
		for _, m := range []string{"lunch?", "order 4712"} {
			if _, err := chats.Send(ctx, id, "joe", m); err != nil {
				t.Fatal(err)
			}
		}
		s := newStreams(false, "")
		o := &historyOptions{chatOptions: chatOptions{Output: cmdutil.Output{IO: s.io, JSON: true}, Client: client, Chat: id}, Search: search.Flags{Pattern: "order"}, grep: "order"}
		if err := historyRun(ctx, o); err != nil {
			t.Fatal(err)
		}
		var got []chat.Message
		if err := json.Unmarshal(s.out.Bytes(), &got); err != nil || len(got) != 2 || got[0].ID != 1 || got[1].ID != 3 {
			t.Errorf("history --grep order: %s %v", s.out, err)
		}
		if s.err.String() != "chatq: examined 3 messages, 2 matched\n" {
			t.Errorf("stderr %q", s.err)
		}
		s = newStreams(false, "")
		o = &historyOptions{chatOptions: chatOptions{Output: cmdutil.Output{IO: s.io}, Client: client, Chat: id}, Search: search.Flags{Pattern: "^order 4711", Regexp: true}, re: regexp.MustCompile("^order 4711")}
		if err := historyRun(ctx, o); err != nil || s.out.String() != id+"\t1\tjoe\torder 4711 shipped\n" {
			t.Errorf("history --regexp: %q %v", s.out, err)
		}
		s = newStreams(false, "")
		o = &historyOptions{chatOptions: chatOptions{Output: cmdutil.Output{IO: s.io}, Client: client, Chat: id}, Search: search.Flags{Pattern: "nope"}, grep: "nope"}
		if err := historyRun(ctx, o); !errors.Is(err, cmdutil.ErrNothing) || s.out.Len() != 0 || s.err.String() != "chatq: examined 3 messages, 0 matched\n" {
			t.Errorf("history, no match: %v, %q %q", err, s.out, s.err)
		}
	})
}
