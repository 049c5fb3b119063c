package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/faultproxy"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// A write whose reply is lost exits 4 and says the server may have applied
// it, naming the command that shows whether it did; the write did apply. A
// read whose reply is lost exits 1, and a write that never reached a server
// exits 1.
func TestLostReplyExits4(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		for _, setup := range [][]string{
			{"queue", "create", "jobs"},
			{"chat", "create", "--from", "joe", "--to", "jeff", "hi"},
		} {
			if code, _, stderr := run(ctx, pb, setup...); code != 0 {
				t.Fatalf("%v: exit %d: %s", setup, code, stderr)
			}
		}
		tests := []struct {
			args  []string
			check []string // shows the write applied: stdout contains the body
			hint  string
		}{
			{[]string{"chat", "join", "1", "body-c1"}, []string{"chat", "members", "1"}, "chatq chat members 1"},
			{[]string{"list", "rpush", "items", "body-l1"}, []string{"list", "lrange", "items", "0", "-1"}, "chatq list lrange items 0 -1"},
		}
		for _, tt := range tests {
			body := tt.args[len(tt.args)-1]
			// Once first, so that the server has the script and the
			// request whose reply is lost is the EVALSHA that applies it.
			warm := append(append([]string{}, tt.args[:len(tt.args)-1]...), "warm")
			if code, _, stderr := run(ctx, pb, warm...); code != 0 {
				t.Fatalf("%v: exit %d: %s", warm, code, stderr)
			}
			p.DropReplyTo(body)
			code, _, stderr := run(ctx, pb, append([]string{"--timeout", "1s"}, tt.args...)...)
			if code != cmdutil.ExitMaybeApplied || !strings.Contains(stderr, "may have applied it") || !strings.Contains(stderr, tt.hint) {
				t.Errorf("%v with its reply lost: exit %d, want 4 with a hint naming %q:\n%s", tt.args, code, tt.hint, stderr)
			}
			if code, stdout, stderr := run(ctx, b, tt.check...); code != 0 || !strings.Contains(stdout, body) {
				t.Errorf("%v: the lost write did not apply: exit %d %q %s", tt.check, code, stdout, stderr)
			}
		}

		p.DropReplyTo("jobs")
		if code, _, stderr := run(ctx, pb, "--timeout", "1s", "queue", "stats", "jobs"); code != cmdutil.ExitError {
			t.Errorf("a read with its reply lost: exit %d, want 1:\n%s", code, stderr)
		}

		// A push repeats after a lost reply (see TestLostReplyRepeated);
		// when the server stays away past --timeout it exits 4.
		back := awayAfterDrop(ctx, p, "body-q1")
		code, _, stderr := run(ctx, pb, "--timeout", "1s", "queue", "push", "jobs", "body-q1")
		back()
		if code != cmdutil.ExitMaybeApplied || !strings.Contains(stderr, "may have applied it") {
			t.Errorf("a push whose server stays away past --timeout: exit %d, want 4:\n%s", code, stderr)
		}

		_ = p.Close()
		if code, _, stderr := run(ctx, pb, "--timeout", "1s", "queue", "push", "jobs", "never"); code != cmdutil.ExitError {
			t.Errorf("a write to a closed port: exit %d, want 1:\n%s", code, stderr)
		}
	})
}

// A bulk push whose reply is lost part way, and whose server then stays
// away past --timeout, prints the ids it stored, exits 4, and says which
// lines (one batch: all or none) may also be stored and how to resume
// either way; the batch was in fact stored whole.
func TestPushLinesLostReplySaysWhatWasStored(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		if code, _, stderr := run(ctx, pb, "queue", "create", "bulk"); code != 0 {
			t.Fatalf("create: %d %s", code, stderr)
		}
		var in strings.Builder
		for i := 1; i <= 150; i++ {
			fmt.Fprintf(&in, "line-%d\n", i)
		}
		// The second batch, lines 101-150 (the first loads the script);
		// the server goes away once its reply is dropped, so that the
		// batch's repeats (with its token) fail too.
		back := awayAfterDrop(ctx, p, "line-120")
		var out, errOut syncBuffer
		code := runChatq(ctx, pb, in.String(), &out, &errOut, "--timeout", "1s", "-o", "json", "queue", "push", "bulk", "--lines", "-")
		back()
		if code != cmdutil.ExitMaybeApplied {
			t.Fatalf("exit %d, want 4: %s", code, errOut.String())
		}
		var ids []struct{ ID string }
		if err := json.Unmarshal([]byte(out.String()), &ids); err != nil || len(ids) != 100 {
			t.Errorf("printed %d ids (%v), want the 100 stored: %s", len(ids), err, out.String())
		}
		for _, want := range []string{"100 of 150 messages were stored, and lines 101-150 may have been too, all of them or none",
			"resume with `tail -n +151 FILE | chatq queue push bulk --lines -` if it is there, else with `tail -n +101 FILE"} {
			if !strings.Contains(errOut.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
			}
		}
		code, stdout, stderr := run(ctx, b, "queue", "stats", "bulk", "-o", "json")
		var st struct{ Msgs int }
		if err := json.Unmarshal([]byte(stdout), &st); code != 0 || err != nil || st.Msgs != 150 {
			t.Errorf("the lost batch was not stored whole: exit %d, %+v %v %s", code, st, err, stderr)
		}
	})
}

// A push whose reply is lost is sent again with the same token on a new
// connection: it exits 0, prints its id once, and the queue holds the
// message once.
func TestLostReplyRepeated(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		if code, _, stderr := run(ctx, pb, "queue", "create", "jobs"); code != 0 {
			t.Fatalf("create: exit %d: %s", code, stderr)
		}
		// Once first, so that the request whose reply is lost is the
		// EVALSHA that applies the push.
		if code, _, stderr := run(ctx, pb, "queue", "push", "jobs", "warm"); code != 0 {
			t.Fatalf("warm: exit %d: %s", code, stderr)
		}
		p.DropReplyTo("body-q1")
		code, stdout, stderr := run(ctx, pb, "--timeout", "300ms", "-o", "json", "queue", "push", "jobs", "body-q1")
		if code != 0 {
			t.Fatalf("push with its reply lost: exit %d, want 0:\n%s", code, stderr)
		}
		if _, _, _, dropped := p.Counts(); dropped != 1 {
			t.Fatalf("the proxy dropped %d replies, want 1", dropped)
		}
		var pushed struct{ ID string }
		if err := json.Unmarshal([]byte(stdout), &pushed); err != nil || pushed.ID == "" {
			t.Fatalf("push printed %q: %v", stdout, err)
		}
		code, stdout, stderr = run(ctx, b, "-o", "json", "queue", "peek", "jobs", "-n", "10")
		if code != 0 {
			t.Fatalf("peek: exit %d: %s", code, stderr)
		}
		var msgs []struct{ ID, Message string }
		if err := json.Unmarshal([]byte(stdout), &msgs); err != nil {
			t.Fatalf("peek printed %q: %v", stdout, err)
		}
		var n int
		for _, m := range msgs {
			if m.Message == "body-q1" {
				n++
				if m.ID != pushed.ID {
					t.Errorf("stored id %s, printed %s", m.ID, pushed.ID)
				}
			}
		}
		if n != 1 {
			t.Errorf("the queue holds body-q1 %d times, want once: %s", n, stdout)
		}
	})
}

// A pop whose reply is lost is sent again with the same token on a new
// connection: it exits 0, prints the message it popped once, and pops no
// other: the queue holds the rest, and counts one receive.
func TestLostPopRepeated(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		for _, args := range [][]string{
			{"queue", "create", "popq"}, {"queue", "push", "popq", "first"}, {"queue", "push", "popq", "second"},
			// Once first, so that the server has the script and the
			// request whose reply is lost is the EVALSHA that pops.
			{"queue", "create", "warm"}, {"queue", "poll", "warm", "--pop"},
		} {
			if code, _, stderr := run(ctx, pb, args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
		}
		p.DropReplyTo("popq")
		code, stdout, stderr := run(ctx, pb, "--timeout", "300ms", "-o", "json", "queue", "poll", "popq", "--pop")
		if code != 0 {
			t.Fatalf("pop with its reply lost: exit %d, want 0:\n%s", code, stderr)
		}
		if _, _, _, dropped := p.Counts(); dropped != 1 {
			t.Fatalf("the proxy dropped %d replies, want 1", dropped)
		}
		var popped []struct{ ID, Message string }
		if err := json.Unmarshal([]byte(stdout), &popped); err != nil || len(popped) != 1 || popped[0].Message != "first" {
			t.Fatalf("pop printed %q (%v), want the first message once", stdout, err)
		}
		code, stdout, stderr = run(ctx, b, "-o", "json", "queue", "peek", "popq", "-n", "10")
		var left []struct{ Message string }
		if err := json.Unmarshal([]byte(stdout), &left); code != 0 || err != nil || len(left) != 1 || left[0].Message != "second" {
			t.Errorf("after the pop the queue holds %s (exit %d, %v %s), want the second message only", stdout, code, err, stderr)
		}
		code, stdout, _ = run(ctx, b, "-o", "json", "queue", "stats", "popq")
		var st struct{ TotalRecv int }
		if err := json.Unmarshal([]byte(stdout), &st); code != 0 || err != nil || st.TotalRecv != 1 {
			t.Errorf("stats %s: want totalrecv 1 (one pop applied)", stdout)
		}
	})
}

// A list pop whose reply is lost is sent again with the same token on a
// new connection: it exits 0, prints the item it popped once, and pops no
// other: the list holds the rest.
func TestLostListPopRepeated(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		for _, args := range [][]string{
			{"list", "rpush", "plist", "first", "second", "third"},
			// Once first, so that the server has the script and the
			// request whose reply is lost is the EVALSHA that pops.
			{"list", "lpop", "warm"},
		} {
			if code, _, stderr := run(ctx, pb, args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
		}
		for _, tc := range []struct {
			args []string
			want string
		}{
			{[]string{"list", "lpop", "plist"}, "first"},
			{[]string{"list", "rpop", "plist"}, "third"},
		} {
			_, _, _, before := p.Counts()
			p.DropReplyTo("plist")
			code, stdout, stderr := run(ctx, pb, append([]string{"--timeout", "300ms", "-o", "json"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("%v with its reply lost: exit %d, want 0:\n%s", tc.args, code, stderr)
			}
			if _, _, _, dropped := p.Counts(); dropped != before+1 {
				t.Fatalf("the proxy dropped %d replies, want 1", dropped-before)
			}
			var popped []string
			if err := json.Unmarshal([]byte(stdout), &popped); err != nil || len(popped) != 1 || popped[0] != tc.want {
				t.Fatalf("%v printed %q (%v), want [%q]", tc.args, stdout, err, tc.want)
			}
		}
		code, stdout, stderr := run(ctx, b, "-o", "json", "list", "lrange", "plist", "0", "-1")
		var left []string
		if err := json.Unmarshal([]byte(stdout), &left); code != 0 || err != nil || len(left) != 1 || left[0] != "second" {
			t.Errorf("after the pops the list holds %s (exit %d, %v %s), want the second item only", stdout, code, err, stderr)
		}
	})
}

// A chat send whose reply is lost is sent again with the same token on a
// new connection: it exits 0, prints the id it was stored under, and the
// chat holds the message once.
func TestLostSendRepeated(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		for _, args := range [][]string{
			{"chat", "create", "--from", "joe", "--to", "jeff", "hi"},
			// Once first, so that the server has the script and the
			// request whose reply is lost is the EVALSHA that sends.
			{"chat", "send", "1", "--from", "jeff", "warm"},
		} {
			if code, _, stderr := run(ctx, pb, args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
		}
		p.DropReplyTo("body-c1")
		code, stdout, stderr := run(ctx, pb, "--timeout", "300ms", "-o", "json", "chat", "send", "1", "--from", "jeff", "body-c1")
		if code != 0 {
			t.Fatalf("send with its reply lost: exit %d, want 0:\n%s", code, stderr)
		}
		if _, _, _, dropped := p.Counts(); dropped != 1 {
			t.Fatalf("the proxy dropped %d replies, want 1", dropped)
		}
		var sent struct {
			MessageID int64 `json:"message_id"`
		}
		if err := json.Unmarshal([]byte(stdout), &sent); err != nil || sent.MessageID == 0 {
			t.Fatalf("send printed %q: %v", stdout, err)
		}
		code, stdout, stderr = run(ctx, b, "-o", "json", "chat", "history", "1")
		if code != 0 {
			t.Fatalf("history: exit %d: %s", code, stderr)
		}
		var msgs []struct {
			ID      int64
			Message string
		}
		if err := json.Unmarshal([]byte(stdout), &msgs); err != nil {
			t.Fatalf("history printed %q: %v", stdout, err)
		}
		var n int
		for _, m := range msgs {
			if m.Message == "body-c1" {
				n++
				if m.ID != sent.MessageID {
					t.Errorf("stored id %d, printed %d", m.ID, sent.MessageID)
				}
			}
		}
		if n != 1 {
			t.Errorf("the chat holds body-c1 %d times, want once: %s", n, stdout)
		}
	})
}

// A bulk push whose batch's reply is lost sends the batch again with its
// token: it exits 0, prints each id once, and the queue holds each line
// once.
func TestLostBatchRepeated(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		if code, _, stderr := run(ctx, pb, "queue", "create", "bulk"); code != 0 {
			t.Fatalf("create: %d %s", code, stderr)
		}
		var in strings.Builder
		for i := 1; i <= 150; i++ {
			fmt.Fprintf(&in, "line-%d\n", i)
		}
		// The second batch, lines 101-150 (the first loads the script).
		p.DropReplyTo("line-120")
		var out, errOut syncBuffer
		code := runChatq(ctx, pb, in.String(), &out, &errOut, "--timeout", "300ms", "-o", "json", "queue", "push", "bulk", "--lines", "-")
		if code != 0 {
			t.Fatalf("exit %d, want 0: %s", code, errOut.String())
		}
		if _, _, _, dropped := p.Counts(); dropped != 1 {
			t.Fatalf("the proxy dropped %d replies, want 1", dropped)
		}
		var ids []struct{ ID string }
		if err := json.Unmarshal([]byte(out.String()), &ids); err != nil || len(ids) != 150 {
			t.Fatalf("printed %d ids (%v), want 150", len(ids), err)
		}
		seen := map[string]bool{}
		for _, id := range ids {
			seen[id.ID] = true
		}
		code, stdout, stderr := run(ctx, b, "queue", "stats", "bulk", "-o", "json")
		var st struct{ Msgs, TotalSent int }
		if err := json.Unmarshal([]byte(stdout), &st); code != 0 || err != nil || st.Msgs != 150 || st.TotalSent != 150 || len(seen) != 150 {
			t.Errorf("want 150 messages stored once, 150 distinct ids: exit %d, %+v, %d ids, %v %s", code, st, len(seen), err, stderr)
		}
	})
}

// awayAfterDrop drops the reply to the request holding marker, and makes
// the server go away (a blackhole) as soon as it has: the call's repeats
// with its token fail too. back waits for that and brings the server back.
func awayAfterDrop(ctx context.Context, p *faultproxy.Proxy, marker string) (back func()) {
	_, _, _, before := p.Counts()
	p.DropReplyTo(marker)
	away := make(chan struct{})
	go func() {
		defer close(away)
		for ctx.Err() == nil {
			if _, _, _, dropped := p.Counts(); dropped > before {
				p.Blackhole(true)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return func() {
		<-away
		p.Blackhole(false)
	}
}
