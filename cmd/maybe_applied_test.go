package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/testkit/faultproxy"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

// A write whose reply is lost, and whose server then stays away past
// --timeout, exits 4 and says the server may have applied it, naming the
// command that shows whether it did; the write did apply. A
// read whose reply is lost exits 1, and a write that never reached a server
// exits 1.
func TestLostReplyExits4(t *testing.T) {
	redistest.SlowOnEmbedded(t, "a lost reply on each write command, waiting out --timeout each")
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
			// The write carries a token and repeats after a lost reply
			// (TestLost*Repeated): the server stays away past --timeout.
			back := awayAfterDrop(ctx, p, body)
			code, _, stderr := run(ctx, pb, append([]string{"--timeout", "1s"}, tt.args...)...)
			back()
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

		// A waiting pop whose reply is lost as --wait ends: asked once
		// more, without waiting, it prints what it popped.
		p.DropReplyTo("popq")
		code, stdout, stderr = run(ctx, pb, "--timeout", "300ms", "-o", "json", "queue", "poll", "popq", "--pop", "--wait", "1ms")
		if code != 0 {
			t.Fatalf("waiting pop with its reply lost: exit %d, want 0:\n%s", code, stderr)
		}
		if _, _, _, dropped := p.Counts(); dropped != 2 {
			t.Fatalf("the proxy dropped %d replies, want 2", dropped)
		}
		popped = nil
		if err := json.Unmarshal([]byte(stdout), &popped); err != nil || len(popped) != 1 || popped[0].Message != "second" {
			t.Fatalf("waiting pop printed %q (%v), want the second message once", stdout, err)
		}
		code, stdout, _ = run(ctx, b, "-o", "json", "queue", "stats", "popq")
		if err := json.Unmarshal([]byte(stdout), &st); code != 0 || err != nil || st.TotalRecv != 2 {
			t.Errorf("stats %s: want totalrecv 2 (two pops applied)", stdout)
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

// noRetryClient is a client of b (through its proxy) that sends nothing
// again by itself, as chatq's own clients: the controls below repeat a
// call without a token through conn.Repeat, as the command would.
func noRetryClient(t *testing.T, b redistest.Backend) *redis.Client {
	t.Helper()
	opt, err := redis.ParseURL(b.URL)
	if err != nil {
		t.Fatal(err)
	}
	opt.MaxRetries = -1
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// receipts receives n messages of queue q for an hour and returns their
// ids and receipts, in order.
func receipts(ctx context.Context, t *testing.T, b redistest.Backend, q string, n int) (ids, recs []string) {
	t.Helper()
	code, stdout, stderr := run(ctx, b, "-o", "json", "queue", "poll", q, "-n", fmt.Sprint(n), "--vt", "1h")
	var got []struct{ ID, Receipt string }
	if err := json.Unmarshal([]byte(stdout), &got); code != 0 || err != nil || len(got) != n {
		t.Fatalf("poll %s: exit %d, %q (%v) %s; want %d messages", q, code, stdout, err, stderr, n)
	}
	for _, m := range got {
		ids, recs = append(ids, m.ID), append(recs, m.Receipt)
	}
	return ids, recs
}

// An ack whose reply is lost is sent again with the same token: it exits
// 0 and reports the message acked (not "missing"), and the queue lost
// that message only. The control, an ack without a token repeated the
// same way, reports the message it deleted as not in the queue.
func TestLostAckRepeated(t *testing.T) {
	redistest.SlowOnEmbedded(t, "ack repeated through a dropping proxy, with its control")
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		for _, args := range [][]string{
			{"queue", "create", "ackq"}, {"queue", "push", "ackq", "a"}, {"queue", "push", "ackq", "b"}, {"queue", "push", "ackq", "c"},
		} {
			if code, _, stderr := run(ctx, pb, args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
		}
		ids, recs := receipts(ctx, t, pb, "ackq", 3)
		// Once first, so that the server has the script and the request
		// whose reply is lost is the EVALSHA that acks.
		if code, _, stderr := run(ctx, pb, "queue", "ack", "ackq", recs[2]); code != 0 {
			t.Fatalf("warm ack: exit %d: %s", code, stderr)
		}
		p.DropReplyTo(ids[0])
		code, stdout, stderr := run(ctx, pb, "--timeout", "2s", "-o", "json", "queue", "ack", "ackq", recs[0])
		if code != 0 {
			t.Fatalf("ack with its reply lost: exit %d, want 0:\n%s", code, stderr)
		}
		if _, _, _, dropped := p.Counts(); dropped != 1 {
			t.Fatalf("the proxy dropped %d replies, want 1", dropped)
		}
		var acked struct {
			Acked          int
			Missing, Stale []string
		}
		if err := json.Unmarshal([]byte(stdout), &acked); err != nil || acked.Acked != 1 || len(acked.Missing)+len(acked.Stale) != 0 {
			t.Fatalf("ack printed %q (%v), want 1 acked, none missing", stdout, err)
		}
		code, stdout, _ = run(ctx, b, "-o", "json", "queue", "stats", "ackq")
		var st struct{ Msgs int }
		if err := json.Unmarshal([]byte(stdout), &st); code != 0 || err != nil || st.Msgs != 1 {
			t.Errorf("stats %s: want 1 message left (b)", stdout)
		}

		// The control: the same lost reply, repeated without a token.
		q := delayq.New(noRetryClient(t, pb), delayq.Options{Prefix: pb.Prefix})
		_, _, _, before := p.Counts()
		p.DropReplyTo(ids[1])
		var r *delayq.AckResult
		err := conn.Repeat(ctx, 2*time.Second, func(ctx context.Context) (err error) {
			r, err = q.Ack(ctx, "ackq", recs[1])
			return err
		})
		if _, _, _, dropped := p.Counts(); dropped != before+1 {
			t.Fatalf("control: the proxy dropped %d replies, want 1", dropped-before)
		}
		if err == nil || r == nil || r.Acked != 0 || len(r.Missing) != 1 {
			t.Errorf("control: an ack repeated without a token answered %+v %v; want it missing", r, err)
		}
	})
}

// A retry whose reply is lost is sent again with the same token: it exits
// 0, reports the message retried, and prints the time the message is now
// visible at, which is the first call's: the repeat changed nothing.
func TestLostRetryRepeated(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		for _, args := range [][]string{
			{"queue", "create", "retryq"}, {"queue", "push", "retryq", "a"}, {"queue", "push", "retryq", "b"},
		} {
			if code, _, stderr := run(ctx, pb, args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
		}
		ids, recs := receipts(ctx, t, pb, "retryq", 2)
		if code, _, stderr := run(ctx, pb, "queue", "retry", "retryq", recs[1], "--delay", "1m"); code != 0 {
			t.Fatalf("warm retry: exit %d: %s", code, stderr)
		}
		p.DropReplyTo(ids[0])
		code, stdout, stderr := run(ctx, pb, "--timeout", "2s", "-o", "json", "queue", "retry", "retryq", recs[0], "--delay", "30m")
		if code != 0 {
			t.Fatalf("retry with its reply lost: exit %d, want 0:\n%s", code, stderr)
		}
		if _, _, _, dropped := p.Counts(); dropped != 1 {
			t.Fatalf("the proxy dropped %d replies, want 1", dropped)
		}
		var retried struct {
			Retried        int
			VisibleAt      int64 `json:"visible_at"`
			Missing, Stale []string
		}
		if err := json.Unmarshal([]byte(stdout), &retried); err != nil || retried.Retried != 1 || len(retried.Missing)+len(retried.Stale) != 0 {
			t.Fatalf("retry printed %q (%v), want 1 retried", stdout, err)
		}
		code, stdout, stderr = run(ctx, b, "-o", "json", "queue", "get", "retryq", ids[0])
		var m struct {
			VisibleAt int64 `json:"visible_at"`
		}
		if err := json.Unmarshal([]byte(stdout), &m); code != 0 || err != nil || m.VisibleAt != retried.VisibleAt {
			t.Errorf("the message is visible at %d (exit %d, %v %s), want the printed %d", m.VisibleAt, code, err, stderr, retried.VisibleAt)
		}
	})
}

// A list push whose reply is lost is sent again with the same token: it
// exits 0, prints the list's length, and the list holds the items once:
// pushed from arguments at either end, and from stdin (the second batch's
// reply lost). The control, a push without a token repeated the same way,
// stores its item twice.
func TestLostListPushRepeated(t *testing.T) {
	redistest.SlowOnEmbedded(t, "list pushes repeated through a dropping proxy, 700 lines in batches")
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		// Once first, so that the server has the script and the request
		// whose reply is lost is the EVALSHA that pushes.
		if code, _, stderr := run(ctx, pb, "list", "rpush", "warm", "x"); code != 0 {
			t.Fatalf("warm: exit %d: %s", code, stderr)
		}
		want := []string{"head"}
		for _, tc := range []struct {
			args   []string
			stdin  string
			marker string
			length int
		}{
			{[]string{"list", "rpush", "pl", "body-r1", "body-r2"}, "", "body-r1", 2},
			{[]string{"list", "lpush", "pl", "head"}, "", "head", 3},
			{[]string{"list", "rpush", "pl", "-"}, lines(1, 700), "line-650", 703},
		} {
			_, _, _, before := p.Counts()
			p.DropReplyTo(tc.marker)
			var out, errOut syncBuffer
			code := runChatq(ctx, pb, tc.stdin, &out, &errOut, append([]string{"--timeout", "2s", "-o", "json"}, tc.args...)...)
			if code != 0 {
				t.Fatalf("%v with its reply lost: exit %d, want 0:\n%s", tc.args, code, errOut.String())
			}
			if _, _, _, dropped := p.Counts(); dropped != before+1 {
				t.Fatalf("%v: the proxy dropped %d replies, want 1", tc.args, dropped-before)
			}
			var res struct{ Length int }
			if err := json.Unmarshal([]byte(out.String()), &res); err != nil || res.Length != tc.length {
				t.Fatalf("%v printed %q (%v), want length %d", tc.args, out.String(), err, tc.length)
			}
		}
		want = append(want, "body-r1", "body-r2")
		want = append(want, strings.Split(strings.TrimSuffix(lines(1, 700), "\n"), "\n")...)
		code, stdout, stderr := run(ctx, b, "-o", "json", "list", "lrange", "pl", "0", "-1")
		var got []string
		if err := json.Unmarshal([]byte(stdout), &got); code != 0 || err != nil || !slices.Equal(got, want) {
			t.Errorf("the list holds %d items (exit %d, %v %s), want each of the %d once, in order", len(got), code, err, stderr, len(want))
		}

		// The control: the same lost reply, repeated without a token.
		lists := shardlist.New(noRetryClient(t, pb), shardlist.Options{Prefix: pb.Prefix})
		_, _, _, before := p.Counts()
		p.DropReplyTo("body-c1")
		err := conn.Repeat(ctx, 2*time.Second, func(ctx context.Context) error {
			_, err := lists.RPush(ctx, "ctl", "body-c1")
			return err
		})
		if _, _, _, dropped := p.Counts(); err != nil || dropped != before+1 {
			t.Fatalf("control: %v, the proxy dropped %d replies, want 1", err, dropped-before)
		}
		if n, err := lists.LLen(ctx, "ctl"); err != nil || n != 2 {
			t.Errorf("control: a push repeated without a token left %d items (%v), want 2 (stored twice)", n, err)
		}
	})
}

// lines is "line-<from>\n" … "line-<to>\n".
func lines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "line-%d\n", i)
	}
	return b.String()
}

// A blocking pop whose reply is lost is sent again with its token: it
// exits 0, prints the item it took once, and takes no other: from the
// head and the tail; and when the server stays away until after --wait
// has ended, the pop is sent again then, without waiting, and still gets
// its item. The control, the same blocking pop without a token, takes a
// second item and the first is lost.
func TestLostBlockingPopRepeated(t *testing.T) {
	redistest.SlowOnEmbedded(t, "blocking pops through a proxy that drops replies, one waits out a 1 s outage")
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		for _, args := range [][]string{
			{"list", "rpush", "bl", "first", "second", "third", "fourth", "fifth", "sixth"},
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
			away bool // the server stays away past --wait
		}{
			{[]string{"--timeout", "2s", "list", "blpop", "bl", "--wait", "5s"}, "first", false},
			{[]string{"--timeout", "2s", "list", "brpop", "bl", "--wait", "5s"}, "sixth", false},
			{[]string{"--timeout", "3s", "list", "blpop", "bl", "--wait", "300ms"}, "second", true},
		} {
			_, _, _, before := p.Counts()
			back := func() {}
			if tc.away {
				away := awayAfterDrop(ctx, p, "{bl}")
				released := make(chan struct{})
				// The outage lasts past --wait's end, not past --timeout.
				go func() { defer close(released); time.Sleep(time.Second); away() }()
				back = func() { <-released }
			} else {
				p.DropReplyTo("{bl}")
			}
			code, stdout, stderr := run(ctx, pb, append([]string{"-o", "json"}, tc.args...)...)
			back()
			if code != 0 {
				t.Fatalf("%v with its reply lost: exit %d, want 0:\n%s", tc.args, code, stderr)
			}
			if _, _, _, dropped := p.Counts(); dropped != before+1 {
				t.Fatalf("%v: the proxy dropped %d replies, want 1", tc.args, dropped-before)
			}
			var popped []string
			if err := json.Unmarshal([]byte(stdout), &popped); err != nil || !slices.Equal(popped, []string{tc.want}) {
				t.Fatalf("%v printed %q (%v), want [%q]", tc.args, stdout, err, tc.want)
			}
		}
		code, stdout, stderr := run(ctx, b, "-o", "json", "list", "lrange", "bl", "0", "-1")
		var left []string
		if err := json.Unmarshal([]byte(stdout), &left); code != 0 || err != nil || !slices.Equal(left, []string{"third", "fourth", "fifth"}) {
			t.Errorf("after the pops the list holds %s (exit %d, %v %s), want third, fourth, fifth", stdout, code, err, stderr)
		}

		// The control: the same lost reply, repeated without a token.
		lists := shardlist.New(noRetryClient(t, pb), shardlist.Options{Prefix: pb.Prefix})
		_, _, _, before := p.Counts()
		p.DropReplyTo("{bl}")
		var got string
		err := conn.Repeat(ctx, 2*time.Second, func(ctx context.Context) (err error) {
			got, err = lists.BLPop(ctx, "bl", 5*time.Second)
			return err
		})
		if _, _, _, dropped := p.Counts(); err != nil || dropped != before+1 {
			t.Fatalf("control: %v, the proxy dropped %d replies, want 1", err, dropped-before)
		}
		if n, err := lists.LLen(ctx, "bl"); got != "fourth" || err != nil || n != 1 {
			t.Errorf("control: a blocking pop repeated without a token got %q and left %d items (%v); want fourth, and 1 left (third lost)", got, n, err)
		}
	})
}

// A chat create whose reply is lost is sent again with the same token: it
// exits 0, prints the chat it made, and makes one chat: when the create
// script's reply is lost, and when the reply to taking the automatic id
// is; the ids are taken once each (the next create gets the next id). A
// join whose reply is lost says "joined", as the first did; the control,
// a join repeated without a token, says the user was already a member.
func TestLostCreateJoinRepeated(t *testing.T) {
	redistest.SlowOnEmbedded(t, "chat create and join repeated through a dropping proxy, each with its control")
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		// Once first, so that the server has the scripts and the request
		// whose reply is lost is the EVALSHA that applies.
		for _, args := range [][]string{
			{"chat", "create", "--from", "joe", "--to", "jeff", "warm"},
			{"chat", "join", "1", "warm"},
		} {
			if code, _, stderr := run(ctx, pb, args...); code != 0 {
				t.Fatalf("%v: exit %d: %s", args, code, stderr)
			}
		}
		for i, marker := range []string{"body-cr1", "ids:chat:}"} {
			_, _, _, before := p.Counts()
			p.DropReplyTo(marker)
			code, stdout, stderr := run(ctx, pb, "--timeout", "2s", "-o", "json", "chat", "create", "--from", "ann", "--to", "bob", "body-cr1")
			if code != 0 {
				t.Fatalf("create with the reply to %q lost: exit %d, want 0:\n%s", marker, code, stderr)
			}
			if _, _, _, dropped := p.Counts(); dropped != before+1 {
				t.Fatalf("%q: the proxy dropped %d replies, want 1", marker, dropped-before)
			}
			var c struct {
				ChatID    string `json:"chat_id"`
				MessageID int64  `json:"message_id"`
			}
			if err := json.Unmarshal([]byte(stdout), &c); err != nil || c.ChatID != fmt.Sprint(i+2) || c.MessageID != 1 {
				t.Fatalf("create printed %q (%v), want chat %d, message 1", stdout, err, i+2)
			}
		}
		code, stdout, stderr := run(ctx, b, "-o", "json", "chat", "ls", "ann")
		var chats []json.RawMessage
		if err := json.Unmarshal([]byte(stdout), &chats); code != 0 || err != nil || len(chats) != 2 {
			t.Errorf("ann is in %s (exit %d, %v %s), want 2 chats", stdout, code, err, stderr)
		}
		code, stdout, stderr = run(ctx, b, "chat", "create", "--from", "ann", "--to", "bob")
		if code != 0 || strings.TrimSpace(stdout) != "4" {
			t.Errorf("the next create made chat %q (exit %d %s), want 4: an id was taken twice", stdout, code, stderr)
		}

		p.DropReplyTo("body-j1")
		code, stdout, stderr = run(ctx, pb, "--timeout", "2s", "-o", "json", "chat", "join", "1", "body-j1")
		if code != 0 {
			t.Fatalf("join with its reply lost: exit %d, want 0:\n%s", code, stderr)
		}
		var j struct{ Joined bool }
		if err := json.Unmarshal([]byte(stdout), &j); err != nil || !j.Joined {
			t.Errorf("join printed %q (%v), want joined", stdout, err)
		}
		code, stdout, _ = run(ctx, b, "-o", "json", "chat", "members", "1")
		var members []struct{ User string }
		if err := json.Unmarshal([]byte(stdout), &members); code != 0 || err != nil || len(members) != 4 {
			t.Errorf("chat 1 has members %s, want joe, jeff, warm and body-j1", stdout)
		}

		// The control: the same lost reply, repeated without a token.
		chats2 := chat.New(noRetryClient(t, pb), chat.Options{Prefix: pb.Prefix})
		_, _, _, before := p.Counts()
		p.DropReplyTo("body-j2")
		var joined *chat.Joined
		err := conn.Repeat(ctx, 2*time.Second, func(ctx context.Context) (err error) {
			joined, err = chats2.Join(ctx, "1", "body-j2")
			return err
		})
		if _, _, _, dropped := p.Counts(); err != nil || dropped != before+1 {
			t.Fatalf("control: %v, the proxy dropped %d replies, want 1", err, dropped-before)
		}
		if joined.Added {
			t.Errorf("control: a join repeated without a token said it added the user: %+v", joined)
		}
	})
}
