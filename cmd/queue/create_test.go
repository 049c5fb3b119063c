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

func TestCreateFlags(t *testing.T) {
	defaults := createOptions{Queue: "jobs", VT: 30 * time.Second, MaxSize: 65536}
	tests := []flagCase[createOptions]{
		{args: []string{"jobs"}, want: defaults},
		{args: []string{"jobs", "--vt", "2m", "--delay", "5s", "--maxsize", "-1"},
			want: createOptions{Queue: "jobs", VT: 2 * time.Minute, Delay: 5 * time.Second, MaxSize: -1}},
		{args: []string{"jobs", "--max-receives", "5", "--dead-letter", "dead"},
			want: createOptions{Queue: "jobs", VT: 30 * time.Second, MaxSize: 65536, MaxReceives: 5, DeadLetter: "dead"}},
		{args: []string{"jobs", "--vt", "1500ms"}, wantErr: "--vt 1.5s: must be whole seconds"},
		{args: []string{"jobs", "--delay", "-1s"}, wantErr: "--delay -1s: must not be negative"},
		{args: []string{"jobs", "--maxsize", "0"}, wantErr: "invalid --maxsize 0"},
		{args: []string{"jobs", "--max-receives", "5"}, wantErr: "if any flags in the group [max-receives dead-letter] are set they must all be set"},
		{args: []string{"bad name"}, wantErr: `queue name "bad name"`},
		{args: []string{}, wantErr: "accepts 1 arg(s)"},
	}
	checkFlags(t, NewCmdCreate, func(o *createOptions) { o.IO, o.Client = nil, nil }, tests)
}

func TestCreateRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ios, out, errOut := testIO(true, "")
		if err := createRun(context.Background(), &createOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", VT: time.Minute, MaxSize: 2048}); err != nil {
			t.Fatal(err)
		}
		if out.Len() != 0 || errOut.String() != "chatq: created queue jobs\n" {
			t.Fatalf("terminal: %q %q", out, errOut)
		}
		ios, out, errOut = testIO(false, "")
		if err := createRun(context.Background(), &createOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "other", VT: 30 * time.Second, Delay: 5 * time.Second, MaxSize: -1}); err != nil {
			t.Fatal(err)
		}
		var s queueStatsJSON
		decode(t, out, &s)
		if s.Name != "other" || s.Delay != 5 || s.MaxSize != -1 || s.VT != 30 || errOut.Len() != 0 {
			t.Fatalf("piped JSON: %+v %q", s, errOut)
		}
		ios, _, _ = testIO(false, "")
		err := createRun(context.Background(), &createOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", MaxSize: 65536})
		if !errors.Is(err, delayq.ErrQueueExists) || !strings.Contains(hintOf(err), "chatq queue set") {
			t.Fatalf("create twice: %v", err)
		}
	})
}

// --vt 0 makes a queue whose received messages are due again at once, as
// RSMQ allows: the package's "0 means the default" must not turn it into
// 30s (it did), and an export of that queue imports with its vt of 0.
func TestCreateVTZero(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ios, out, _ := testIO(false, "")
		if err := createRun(context.Background(), &createOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "zero", MaxSize: 65536}); err != nil {
			t.Fatal(err)
		}
		var s queueStatsJSON
		decode(t, out, &s)
		if s.VT != 0 || s.Delay != 0 {
			t.Fatalf("--vt 0: %+v", s)
		}
		q, err := testClient(b)()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.Push(context.Background(), "zero", "x", delayq.PushOptions{}); err != nil {
			t.Fatal(err)
		}
		for i := range 2 { // due again at once: received twice in a row
			got, err := q.Receive(context.Background(), "zero", delayq.ReceiveOptions{})
			if err != nil || len(got) != 1 {
				t.Fatalf("receive %d: %v %v", i, got, err)
			}
		}
		ios, out, _ = testIO(false, "")
		if err := exportRun(context.Background(), &exportOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "zero"}); err != nil {
			t.Fatal(err)
		}
		ios, _, _ = testIO(false, out.String())
		if err := importRun(context.Background(), &importOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "copy", File: "-"}); err != nil {
			t.Fatal(err)
		}
		if st, err := q.Stats(context.Background(), "copy"); err != nil || st.VT != 0 || st.Messages != 1 {
			t.Fatalf("imported copy of a vt-0 queue: %+v %v", st, err)
		}
	})
}

func TestSetFlags(t *testing.T) {
	dur := func(d time.Duration) *time.Duration { return &d }
	num := func(n int) *int { return &n }
	tests := []flagCase[setOptions]{
		{args: []string{"jobs", "--vt", "5m"}, want: setOptions{Queue: "jobs", VT: dur(5 * time.Minute)}},
		{args: []string{"jobs", "--delay", "0", "--maxsize", "-1"}, want: setOptions{Queue: "jobs", Delay: dur(0), MaxSize: num(-1)}},
		{args: []string{"jobs", "--max-receives", "0", "--dead-letter", ""}, want: setOptions{Queue: "jobs", MaxReceives: num(0)}},
		{args: []string{"jobs", "--max-receives", "3", "--dead-letter", "dead"}, want: setOptions{Queue: "jobs", MaxReceives: num(3), DeadLetter: "dead"}},
		{args: []string{"jobs"}, wantErr: "at least one of the flags in the group"},
		{args: []string{"jobs", "--vt", "1.5s"}, wantErr: "--vt 1.5s: must be whole seconds"},
		{args: []string{"jobs", "--maxsize", "100"}, wantErr: "invalid --maxsize 100"},
		{args: []string{"jobs", "--max-receives", "-2", "--dead-letter", "d"}, wantErr: "max receives -2: must not be negative"},
		{args: []string{"QUEUES", "--vt", "1s"}, wantErr: "registry"},
	}
	checkFlags(t, NewCmdSet, func(o *setOptions) { o.IO, o.Client = nil, nil }, tests)
}

func TestSetRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		newQueue(t, b, "dead", delayq.Attributes{})
		newQueue(t, b, "jobs", delayq.Attributes{Delay: 5 * time.Second})
		zero, three := time.Duration(0), 3
		ios, out, errOut := testIO(true, "")
		err := setRun(context.Background(), &setOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", Delay: &zero, MaxReceives: &three, DeadLetter: "dead"})
		if err != nil {
			t.Fatal(err)
		}
		if out.Len() != 0 || errOut.String() != "chatq: changed queue jobs\n" {
			t.Fatalf("terminal: %q %q", out, errOut)
		}
		// Piped JSON: the stats after the change; --max-receives 0 drops
		// the policy, and what was not given stays.
		none := 0
		ios, out, errOut = testIO(false, "")
		if err := setRun(context.Background(), &setOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "jobs", MaxReceives: &none}); err != nil {
			t.Fatal(err)
		}
		var s queueStatsJSON
		decode(t, out, &s)
		if s.Delay != 0 || s.MaxReceives != 0 || s.DeadLetter != "" || s.VT != 30 || errOut.Len() != 0 {
			t.Fatalf("piped JSON: %+v %q", s, errOut)
		}
	})
}
