package queue

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

func TestAckFlags(t *testing.T) {
	tests := []flagCase[ackOptions]{
		{args: []string{"jobs", "a"}, want: ackOptions{Queue: "jobs", Refs: []string{"a"}}},
		{args: []string{"-o", "json", "jobs", "a", "b.1.2"}, want: ackOptions{Output: cmdutil.Output{JSON: true}, Queue: "jobs", Refs: []string{"a", "b.1.2"}}},
		{args: []string{"jobs"}, wantErr: "requires at least 2 arg(s)"},
		{args: []string{"bad name", "a"}, wantErr: `queue name "bad name"`},
		{args: []string{"QUEUES", "a"}, wantErr: "registry"},
	}
	checkFlags(t, NewCmdAck, func(o *ackOptions) { o.IO, o.Client = nil, nil }, tests)
}

func TestAckRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ids := newQueue(t, b, "jobs", delayq.Attributes{}, "a", "b", "c")
		missing := strings.Repeat("x", 32)

		// On a terminal: success is said on stderr, missing ids listed.
		ios, out, errOut := testIO(true, "")
		err := ackRun(context.Background(), &ackOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", Refs: []string{ids[0], missing}})
		if !errors.Is(err, delayq.ErrMessageNotFound) {
			t.Fatalf("ack of a missing id: %v", err)
		}
		if out.Len() != 0 || !strings.Contains(errOut.String(), "chatq: not in queue jobs: "+missing+"\n") {
			t.Fatalf("terminal: %q %q", out, errOut)
		}
		ios, _, errOut = testIO(true, "")
		if err := ackRun(context.Background(), &ackOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", Refs: []string{ids[1]}}); err != nil {
			t.Fatal(err)
		}
		if errOut.String() != "chatq: acked 1 message\n" {
			t.Fatalf("terminal: %q", errOut)
		}

		// Piped, JSON: the result only.
		ios, out, errOut = testIO(false, "")
		if err := ackRun(context.Background(), &ackOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "jobs", Refs: []string{ids[2]}}); err != nil {
			t.Fatal(err)
		}
		var got queueAckJSON
		decode(t, out, &got)
		if got.Acked != 1 || got.Missing == nil || len(got.Missing) != 0 || got.Stale == nil || errOut.Len() != 0 {
			t.Fatalf("piped JSON: %+v %q", got, errOut)
		}
	})
}

func TestRetryFlags(t *testing.T) {
	tests := []flagCase[retryOptions]{
		{args: []string{"jobs", "id"}, want: retryOptions{Queue: "jobs", Refs: []string{"id"}}},
		{args: []string{"jobs", "id", "--delay", "90s"}, want: retryOptions{Queue: "jobs", Refs: []string{"id"}, Delay: 90 * time.Second}},
		{args: []string{"jobs", "a", "b.1.2", "c"}, want: retryOptions{Queue: "jobs", Refs: []string{"a", "b.1.2", "c"}}},
		{args: []string{"jobs", "--inflight-for", "10m", "--min-receives", "3", "-n", "50"},
			want: retryOptions{Queue: "jobs", Refs: []string{}, Select: filterFlags{MinReceives: 3, InFlightFor: ptr(10 * time.Minute)}, N: 50}},
		{args: []string{"jobs", "--min-receives", "5", "--delay", "1m"},
			want: retryOptions{Queue: "jobs", Refs: []string{}, Select: filterFlags{MinReceives: 5}, Delay: time.Minute}},
		{args: []string{"jobs", "id", "--delay", "-1s"}, wantErr: "--delay -1s: must not be negative"},
		{args: []string{"jobs", "id", "--delay", "1.5ms"}, wantErr: "whole milliseconds"},
		{args: []string{"jobs", "id", "--delay", "soon"}, wantErr: `invalid argument "soon"`},
		{args: []string{"jobs"}, wantErr: "retry needs ids or receipts, or a selection"},
		{args: []string{"jobs", "id", "--inflight-for", "1m"}, wantErr: "not both"},
		{args: []string{"jobs", "id", "-n", "3"}, wantErr: "-n limits a selection"},
		{args: []string{"jobs", "--min-receives", "2", "-n", "-1"}, wantErr: "invalid -n -1"},
		{args: []string{"jobs", "--inflight-for", "0s"}, wantErr: "invalid --inflight-for 0s"},
		{args: []string{"jo:bs", "id"}, wantErr: `queue name "jo:bs"`},
	}
	checkFlags(t, NewCmdRetry, func(o *retryOptions) { o.IO, o.Client, o.Select.inflightFor = nil, nil, 0 }, tests)
}

func ptr[T any](v T) *T { return &v }

func TestRetryRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ids := newQueue(t, b, "jobs", delayq.Attributes{}, "a", "b", "c")
		ios, out, errOut := testIO(true, "")
		if err := retryRun(context.Background(), &retryOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", Refs: ids[:1], Delay: time.Hour}); err != nil {
			t.Fatal(err)
		}
		if out.Len() != 0 || !strings.HasPrefix(errOut.String(), "chatq: "+ids[0]+" due at ") {
			t.Fatalf("terminal: %q %q", out, errOut)
		}
		ios, out, errOut = testIO(false, "")
		if err := retryRun(context.Background(), &retryOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "jobs", Refs: ids[:1]}); err != nil {
			t.Fatal(err)
		}
		var got queueRetryJSON
		decode(t, out, &got)
		if got.ID != ids[0] || got.VisibleAt == 0 || got.Retried != 1 || errOut.Len() != 0 {
			t.Fatalf("piped JSON: %+v %q", got, errOut)
		}
		// Many, one of them missing: the others are retried, exit 1.
		missing := strings.Repeat("x", 32)
		ios, out, errOut = testIO(false, "")
		err := retryRun(context.Background(), &retryOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "jobs", Refs: append([]string{missing}, ids...)})
		if !errors.Is(err, delayq.ErrMessageNotFound) || !strings.Contains(hintOf(err), "acked, popped") {
			t.Fatalf("missing id: %v", err)
		}
		got = queueRetryJSON{}
		decode(t, out, &got)
		if got.ID != "" || got.Retried != 3 || len(got.Missing) != 1 || got.Missing[0] != missing || errOut.String() != "chatq: not in queue jobs: "+missing+"\n" {
			t.Fatalf("many: %+v %q", got, errOut)
		}
	})
}

// A selection releases the messages held in flight, by their receipts:
// those received again since the walk read them are left alone.
func TestRetrySelectionRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		ids := newQueue(t, b, "jobs", delayq.Attributes{}, "a", "b")
		q := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
		if r, err := q.Receive(ctx, "jobs", delayq.ReceiveOptions{N: 2, VT: time.Hour}); err != nil || len(r) != 2 {
			t.Fatal(r, err)
		}
		// a is received a second time.
		if _, err := q.Retry(ctx, "jobs", 0, ids[0]); err != nil {
			t.Fatal(err)
		}
		if r, err := q.Receive(ctx, "jobs", delayq.ReceiveOptions{VT: time.Hour}); err != nil || len(r) != 1 || r[0].ID != ids[0] {
			t.Fatal(r, err)
		}
		if _, err := q.Push(ctx, "jobs", "c", delayq.PushOptions{}); err != nil { // ready, never received
			t.Fatal(err)
		}
		ios, out, errOut := testIO(false, "")
		o := &retryOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "jobs", Select: filterFlags{MinReceives: 2}}
		if err := retryRun(ctx, o); err != nil {
			t.Fatal(err)
		}
		var got queueRetryJSON
		decode(t, out, &got)
		if got.Retried != 1 || got.Examined == nil || *got.Examined != 3 || errOut.String() != "chatq: examined 3 messages, 1 matched\n" {
			t.Fatalf("--min-receives 2: %+v %q", got, errOut)
		}
		if m, err := q.Get(ctx, "jobs", ids[0]); err != nil || m.State != "ready" || m.RC != 2 {
			t.Fatalf("a: %+v %v", m, err)
		}
		// Nothing selected: nothing to return (exit 3 with -e).
		ios, _, _ = testIO(false, "")
		o = &retryOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", Select: filterFlags{InFlightFor: ptr(time.Hour)}}
		if err := retryRun(ctx, o); !errors.Is(err, cmdutil.ErrNothing) {
			t.Fatalf("none selected: %v", err)
		}
		if m, err := q.Get(ctx, "jobs", ids[1]); err != nil || m.State != "inflight" {
			t.Fatalf("b: %+v %v", m, err)
		}
	})
}
