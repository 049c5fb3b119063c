package queue

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/cli/search"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

func TestPollFlags(t *testing.T) {
	zero, fiveMin := time.Duration(0), 5*time.Minute
	tests := []flagCase[pollOptions]{
		{args: []string{"jobs"}, want: pollOptions{Queue: "jobs", N: 1}},
		{args: []string{"jobs", "-n", "10", "--vt", "5m", "--wait", "30s", "--give-up-after", "1m"},
			want: pollOptions{Queue: "jobs", N: 10, VT: &fiveMin, Wait: 30 * time.Second, GiveUpAfter: time.Minute}},
		{args: []string{"jobs", "--vt", "0"}, want: pollOptions{Queue: "jobs", N: 1, VT: &zero}},
		{args: []string{"-o", "json", "jobs", "--pop"}, want: pollOptions{Output: cmdutil.Output{JSON: true}, Queue: "jobs", N: 1, Pop: true}},
		{args: []string{"jobs", "-n", "0"}, wantErr: "invalid -n 0: must be at least 1"},
		{args: []string{"jobs", "--vt", "1.5ms"}, wantErr: "--vt 1.5ms: must be whole milliseconds"},
		{args: []string{"jobs", "--wait", "-1s"}, wantErr: "invalid --wait -1s: must not be negative"},
		{args: []string{"jobs", "--vt", "1s", "--pop"}, wantErr: "[pop vt] were all set"},
		{args: []string{"QUEUES"}, wantErr: "registry"},
	}
	checkFlags(t, NewCmdPoll, func(o *pollOptions) { o.IO, o.Client, o.Persistent = nil, nil, nil }, tests)
}

// pollOpts are poll's options for backend b, on streams ios.
func pollOpts(b redistest.Backend, ios *iostreams.IOStreams) *pollOptions {
	return &pollOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", N: 1,
		Persistent: func(d time.Duration) *conn.Persistent { return &conn.Persistent{IO: ios, GiveUpAfter: d} }}
}

func TestPollRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ids := newQueue(t, b, "jobs", delayq.Attributes{}, "one\ttab", "two", "three")
		ctx := context.Background()

		// On a terminal: a table with a header.
		ios, out, _ := testIO(true, "")
		if err := pollRun(ctx, pollOpts(b, ios)); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Split(out.String(), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "ID ") || !strings.HasPrefix(lines[1], ids[0]+"  1   one\\ttab") {
			t.Fatalf("terminal: %q", out)
		}

		// Piped: ID, RC and MESSAGE tab-separated, the tab escaped.
		ios, out, errOut := testIO(false, "")
		o := pollOpts(b, ios)
		o.Wait = time.Minute // something is due: no wait
		if err := pollRun(ctx, o); err != nil {
			t.Fatal(err)
		}
		if out.String() != ids[1]+"\t1\ttwo\n" || errOut.Len() != 0 {
			t.Fatalf("piped: %q %q", out, errOut)
		}

		// JSON with --pop: the message and its receipt; then nothing is due.
		ios, out, _ = testIO(false, "")
		o = pollOpts(b, ios)
		o.JSON, o.Pop, o.N = true, true, 5
		if err := pollRun(ctx, o); err != nil {
			t.Fatal(err)
		}
		var got []messageJSON
		decode(t, out, &got)
		if len(got) != 1 || got[0].ID != ids[2] || got[0].Message != "three" || !strings.HasPrefix(got[0].Receipt, ids[2]+".1.") {
			t.Fatalf("JSON: %+v", got)
		}
		ios, out, errOut = testIO(true, "")
		if err := pollRun(ctx, pollOpts(b, ios)); !errors.Is(err, cmdutil.ErrNothing) || out.Len() != 0 || !strings.Contains(errOut.String(), "no messages due") {
			t.Fatalf("nothing due: %v %q %q", err, out, errOut)
		}
	})
}

func TestPeekFlags(t *testing.T) {
	hour := time.Hour
	tests := []flagCase[peekOptions]{
		{args: []string{"jobs"}, want: peekOptions{Queue: "jobs", N: 10}},
		{args: []string{"jobs", "-n", "100", "--state", "inflight", "--older-than", "1h"},
			want: peekOptions{Queue: "jobs", N: 100, Filter: filterFlags{State: "inflight", OlderThan: &hour}}},
		{args: []string{"jobs", "--grep", "order 4711", "--min-receives", "3", "--inflight-for", "1h"},
			want: peekOptions{Queue: "jobs", N: 10, Filter: filterFlags{Search: search.Flags{Pattern: "order 4711"}, MinReceives: 3, InFlightFor: &hour}}},
		{args: []string{"jobs", "--grep", "47[0-9]+", "--regexp", "--state", "inflight", "--inflight-for", "1h"},
			want: peekOptions{Queue: "jobs", N: 10, Filter: filterFlags{State: "inflight", Search: search.Flags{Pattern: "47[0-9]+", Regexp: true}, InFlightFor: &hour}}},
		{args: []string{"jobs", "-n", "-1"}, wantErr: "invalid -n -1"},
		{args: []string{"jobs", "--state", "done"}, wantErr: `invalid --state "done"`},
		{args: []string{"jobs", "--older-than", "0"}, wantErr: "invalid --older-than 0s: must be positive"},
		{args: []string{"jobs", "--grep", "47(", "--regexp"}, wantErr: "error parsing regexp"},
		{args: []string{"jobs", "--regexp"}, wantErr: "--regexp needs --grep PATTERN"},
		{args: []string{"jobs", "--min-receives", "-1"}, wantErr: "invalid --min-receives -1"},
		{args: []string{"jobs", "--inflight-for", "0s"}, wantErr: "invalid --inflight-for 0s: must be positive"},
		{args: []string{"jobs", "--inflight-for", "1m", "--state", "ready"}, wantErr: "--inflight-for selects messages in flight, not ready ones"},
		{args: []string{"jo bs"}, wantErr: "queue name"},
	}
	checkFlags(t, NewCmdPeek, func(o *peekOptions) { o.IO, o.Client, o.Filter.olderThan, o.Filter.inflightFor = nil, nil, 0, 0 }, tests)
}

func TestPeekRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ids := newQueue(t, b, "jobs", delayq.Attributes{}, "one", "two")
		ctx := context.Background()
		ios, out, _ := testIO(true, "")
		if err := peekRun(ctx, &peekOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", N: 10}); err != nil {
			t.Fatal(err)
		}
		if lines := strings.Split(out.String(), "\n"); len(lines) != 4 || !strings.HasPrefix(lines[0], "ID ") || !strings.Contains(lines[0], "VISIBLE_AT") {
			t.Fatalf("terminal: %q", out)
		}
		ios, out, _ = testIO(false, "")
		if err := peekRun(ctx, &peekOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", N: 1}); err != nil {
			t.Fatal(err)
		}
		if f := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\t"); len(f) != 5 || f[0] != ids[0] || f[1] != "ready" || f[3] != "0" || f[4] != "one" {
			t.Fatalf("piped: %q", out)
		}
		ios, out, _ = testIO(false, "")
		if err := peekRun(ctx, &peekOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "jobs", N: 10}); err != nil {
			t.Fatal(err)
		}
		var got []peekJSON
		decode(t, out, &got)
		if len(got) != 2 || got[1].ID != ids[1] || got[1].State != "ready" || got[1].Message != "two" || got[1].VisibleAt == 0 {
			t.Fatalf("JSON: %+v", got)
		}
		ios, out, _ = testIO(false, "")
		err := peekRun(ctx, &peekOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", N: 10, Filter: filterFlags{State: "inflight"}})
		if !errors.Is(err, cmdutil.ErrNothing) || out.Len() != 0 {
			t.Fatalf("none in flight: %v %q", err, out)
		}
	})
}

func TestGetFlags(t *testing.T) {
	got, err := parse(t, NewCmdGet, "-o", "json", "jobs", "id.1.2")
	if err != nil || got.Queue != "jobs" || got.Ref != "id.1.2" || !got.JSON {
		t.Fatalf("got %+v, %v", got, err)
	}
	for _, args := range [][]string{{"jobs"}, {"QUEUES", "id"}} {
		_, err := parse(t, NewCmdGet, args...)
		wantUsage(t, args, err, "")
	}
}

func TestGetRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ids := newQueue(t, b, "jobs", delayq.Attributes{}, "one")
		ctx := context.Background()
		ios, out, _ := testIO(true, "")
		if err := getRun(ctx, &getOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", Ref: ids[0]}); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), "FIELD ") || !strings.Contains(out.String(), "\nstate          ready\n") {
			t.Fatalf("terminal: %q", out)
		}
		ios, out, _ = testIO(false, "")
		if err := getRun(ctx, &getOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", Ref: ids[0]}); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out.String(), "id\t"+ids[0]+"\nstate\tready\n") || !strings.HasSuffix(out.String(), "\nmessage\tone\n") {
			t.Fatalf("piped: %q", out)
		}
		ios, out, _ = testIO(false, "")
		if err := getRun(ctx, &getOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "jobs", Ref: ids[0]}); err != nil {
			t.Fatal(err)
		}
		var m peekJSON
		decode(t, out, &m)
		if m.ID != ids[0] || m.Message != "one" || m.State != "ready" {
			t.Fatalf("JSON: %+v", m)
		}
		// A malformed id exits 2 with a hint; a missing one exits 1.
		err := getRun(ctx, &getOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", Ref: "short"})
		if cmdutil.ExitCode(err, false) != cmdutil.ExitUsage || !strings.Contains(hintOf(err), "32 characters") {
			t.Fatalf("malformed id: %v", err)
		}
		err = getRun(ctx, &getOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", Ref: strings.Repeat("x", 32)})
		if !errors.Is(err, delayq.ErrMessageNotFound) || cmdutil.ExitCode(err, false) != cmdutil.ExitError {
			t.Fatalf("missing id: %v", err)
		}
	})
}
