package queue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/redis/go-redis/v9"
)

// batchCounter counts the PushMany calls a client makes (an EVALSHA or
// EVAL that ran, with the queue's realtime channel among the arguments:
// not a NOSCRIPT reply before the EVAL that loads it) and runs after,
// if set, once each has returned.
type batchCounter struct {
	mu    sync.Mutex
	calls int
	after func(n int)
}

func (c *batchCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *batchCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (c *batchCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if name := cmd.Name(); err == nil && (name == "evalsha" || name == "eval") && slices.ContainsFunc(cmd.Args(), func(a any) bool {
			s, ok := a.(string)
			return ok && strings.HasSuffix(s, ":rt:jobs")
		}) {
			c.mu.Lock()
			c.calls++
			n := c.calls
			c.mu.Unlock()
			if c.after != nil {
				c.after(n)
			}
		}
		return err
	}
}

// counted is push's options for backend b whose client counts its PushMany
// calls in bc.
func counted(t *testing.T, b redistest.Backend, stdin string, bc *batchCounter) (*pushOptions, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	rdb := redis.NewClient(b.Client.Options())
	t.Cleanup(func() { rdb.Close() })
	rdb.AddHook(bc)
	ios, out, errOut := testIO(false, stdin)
	o := pushOpts(b, ios, "-")
	o.Client = func() (*delayq.Client, error) { return delayq.New(rdb, delayq.Options{Prefix: b.Prefix}), nil }
	return o, out, errOut
}

func numbered(n int, format string) (string, []string) {
	var b strings.Builder
	bodies := make([]string, n)
	for i := range n {
		bodies[i] = fmt.Sprintf(format, i+1)
		b.WriteString(bodies[i] + "\n")
	}
	return b.String(), bodies
}

// --lines pushes 100 messages per call, fewer when their bodies reach
// 1 MiB, in order.
func TestPushLinesBatches(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		newQueue(t, b, "jobs", delayq.Attributes{MaxSize: -1})
		for _, tc := range []struct {
			name   string
			n      int
			format string
			calls  int
		}{
			{"short lines", 250, "line %d", 3},
			// 10 bodies of 100 KiB fit in 1 MiB, 11 do not.
			{"100 KiB lines", 25, "%d" + strings.Repeat("x", 100<<10), 3},
		} {
			stdin, bodies := numbered(tc.n, tc.format)
			bc := &batchCounter{}
			o, out, _ := counted(t, b, stdin, bc)
			o.Lines = true
			if err := pushRun(ctx, o); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if bc.calls != tc.calls {
				t.Errorf("%s: %d PushMany calls, want %d", tc.name, bc.calls, tc.calls)
			}
			ids := strings.Fields(out.String())
			if len(ids) != tc.n || !slices.IsSorted(ids) {
				t.Errorf("%s: %d ids, sorted %v", tc.name, len(ids), slices.IsSorted(ids))
			}
			q, _ := testClient(b)()
			var got []string
			for len(got) < tc.n {
				ms, err := q.Receive(ctx, "jobs", delayq.ReceiveOptions{N: 100, Pop: true})
				if err != nil || len(ms) == 0 {
					t.Fatalf("%s: receive after %d: %v", tc.name, len(got), err)
				}
				for _, m := range ms {
					got = append(got, m.Body)
				}
			}
			if !slices.Equal(got, bodies) {
				t.Errorf("%s: received out of order", tc.name)
			}
		}
	})
}

// Ctrl-C waits for the batch in flight, stores no more, and says what was
// stored and how to resume.
func TestPushLinesInterrupted(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		newQueue(t, b, "jobs", delayq.Attributes{})
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		stdin, _ := numbered(250, "line %d")
		// The interrupt comes while the second batch is in flight.
		bc := &batchCounter{after: func(n int) {
			if n == 1 {
				cancel()
			}
		}}
		o, out, errOut := counted(t, b, stdin, bc)
		o.Lines, o.JSON = true, true
		err := pushRun(ctx, o)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want the interrupt", err)
		}
		var ids []queuePushJSON
		decode(t, out, &ids)
		q, _ := testClient(b)()
		st, err := q.Stats(context.Background(), "jobs")
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != 100 || st.Messages != 100 || bc.calls != 1 {
			t.Errorf("printed %d ids, stored %d, %d calls; want 100, 100, 1", len(ids), st.Messages, bc.calls)
		}
		want := "chatq: stored 100 of 250 messages before the interrupt; resume with `tail -n +101 FILE | chatq queue push jobs --lines -`\n"
		if errOut.String() != want {
			t.Errorf("stderr %q\nwant %q", errOut, want)
		}
	})
}
