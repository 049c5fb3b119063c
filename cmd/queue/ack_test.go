package queue

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

func TestAckFlags(t *testing.T) {
	tests := []flagCase[ackOptions]{
		{args: []string{"jobs", "a"}, want: ackOptions{Queue: "jobs", Refs: []string{"a"}}},
		{args: []string{"-o", "json", "jobs", "a", "b.1.2"}, want: ackOptions{JSON: true, Queue: "jobs", Refs: []string{"a", "b.1.2"}}},
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
		err := ackRun(context.Background(), &ackOptions{IO: ios, Client: testClient(b), Queue: "jobs", Refs: []string{ids[0], missing}})
		if !errors.Is(err, delayq.ErrMessageNotFound) {
			t.Fatalf("ack of a missing id: %v", err)
		}
		if out.Len() != 0 || !strings.Contains(errOut.String(), "chatq: not in queue jobs: "+missing+"\n") {
			t.Fatalf("terminal: %q %q", out, errOut)
		}
		ios, _, errOut = testIO(true, "")
		if err := ackRun(context.Background(), &ackOptions{IO: ios, Client: testClient(b), Queue: "jobs", Refs: []string{ids[1]}}); err != nil {
			t.Fatal(err)
		}
		if errOut.String() != "chatq: acked 1 message\n" {
			t.Fatalf("terminal: %q", errOut)
		}

		// Piped, JSON: the result only.
		ios, out, errOut = testIO(false, "")
		if err := ackRun(context.Background(), &ackOptions{IO: ios, JSON: true, Client: testClient(b), Queue: "jobs", Refs: []string{ids[2]}}); err != nil {
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
		{args: []string{"jobs", "id"}, want: retryOptions{Queue: "jobs", Ref: "id"}},
		{args: []string{"jobs", "id", "--delay", "90s"}, want: retryOptions{Queue: "jobs", Ref: "id", Delay: 90 * time.Second}},
		{args: []string{"jobs", "id", "--delay", "-1s"}, wantErr: "--delay -1s: must not be negative"},
		{args: []string{"jobs", "id", "--delay", "1.5ms"}, wantErr: "whole milliseconds"},
		{args: []string{"jobs", "id", "--delay", "soon"}, wantErr: `invalid argument "soon"`},
		{args: []string{"jobs"}, wantErr: "accepts 2 arg(s)"},
		{args: []string{"jo:bs", "id"}, wantErr: `queue name "jo:bs"`},
	}
	checkFlags(t, NewCmdRetry, func(o *retryOptions) { o.IO, o.Client = nil, nil }, tests)
}

func TestRetryRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ids := newQueue(t, b, "jobs", delayq.Attributes{}, "a")
		ios, out, errOut := testIO(true, "")
		if err := retryRun(context.Background(), &retryOptions{IO: ios, Client: testClient(b), Queue: "jobs", Ref: ids[0], Delay: time.Hour}); err != nil {
			t.Fatal(err)
		}
		if out.Len() != 0 || !strings.HasPrefix(errOut.String(), "chatq: "+ids[0]+" due at ") {
			t.Fatalf("terminal: %q %q", out, errOut)
		}
		ios, out, errOut = testIO(false, "")
		if err := retryRun(context.Background(), &retryOptions{IO: ios, JSON: true, Client: testClient(b), Queue: "jobs", Ref: ids[0]}); err != nil {
			t.Fatal(err)
		}
		var got queueRetryJSON
		decode(t, out, &got)
		if got.ID != ids[0] || got.VisibleAt == 0 || errOut.Len() != 0 {
			t.Fatalf("piped JSON: %+v %q", got, errOut)
		}
		ios, _, _ = testIO(false, "")
		err := retryRun(context.Background(), &retryOptions{IO: ios, Client: testClient(b), Queue: "jobs", Ref: strings.Repeat("x", 32)})
		if !errors.Is(err, delayq.ErrMessageNotFound) || !strings.Contains(hintOf(err), "acked, popped") {
			t.Fatalf("missing id: %v", err)
		}
	})
}
