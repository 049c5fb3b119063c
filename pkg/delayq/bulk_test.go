package delayq_test

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// numberedBodies are n bodies "m001", "m002", …
func numberedBodies(n int) []string {
	bodies := make([]string, n)
	for i := range bodies {
		bodies[i] = fmt.Sprintf("m%03d", i+1)
	}
	return bodies
}

// receiveAll pops every ready message of q, in order.
func receiveAll(t *testing.T, c *delayq.Client, q string) []string {
	t.Helper()
	var got []string
	for {
		ms, err := c.Receive(t.Context(), q, delayq.ReceiveOptions{N: 100, Pop: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(ms) == 0 {
			return got
		}
		for _, m := range ms {
			got = append(got, m.Body)
		}
	}
}

// A PushMany of many batches stores every message in order, a batch of
// 100 messages (fewer once 1 MiB of bodies) per call, reported by Progress.
func TestPushManyBatches(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{MaxSize: -1})
		for _, tc := range []struct {
			name    string
			bodies  []string
			batches []int
		}{
			{"short bodies", numberedBodies(250), []int{100, 100, 50}},
			// 10 bodies of 100 KiB fit in 1 MiB, 11 do not.
			{"100 KiB bodies", func() []string {
				bs := numberedBodies(25)
				for i := range bs {
					bs[i] += strings.Repeat("x", 100<<10)
				}
				return bs
			}(), []int{10, 10, 5}},
		} {
			var batches []int
			calls := 0
			ps, err := c.PushMany(ctx, "q", tc.bodies, delayq.PushManyOptions{
				Do: func(ctx context.Context, call func(context.Context) error) error {
					calls++
					return call(ctx)
				},
				Progress: func(batch []delayq.Pushed) { batches = append(batches, len(batch)) },
			})
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			if !slices.Equal(batches, tc.batches) || calls != len(tc.batches) || len(ps) != len(tc.bodies) {
				t.Errorf("%s: batches %v in %d calls, %d results; want %v", tc.name, batches, calls, len(ps), tc.batches)
			}
			ids := make([]string, len(ps))
			for i, p := range ps {
				ids[i] = p.ID
			}
			if !slices.IsSorted(ids) {
				t.Errorf("%s: ids out of order", tc.name)
			}
			if got := receiveAll(t, c, "q"); !slices.Equal(got, tc.bodies) {
				t.Errorf("%s: received %d messages, not the %d given in order", tc.name, len(got), len(tc.bodies))
			}
		}
	})
}

// A PushMany that fails mid-way returns the results of the batches stored
// with a *PushError that says exactly how many are stored, how many may
// be, and which message a refusal is about; a PushMany of the rest then
// resumes it without duplicates.
func TestPushManyPartial(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		bodies := numberedBodies(250)
		for _, tc := range []struct {
			name string
			// after runs after batch k (from 1) is stored.
			after func(t *testing.T, c *delayq.Client, q string, k int, cancel context.CancelFunc)
			// lose, when set, drops the reply of batch k after it ran.
			lose int
			want delayq.PushError
			is   error
			// held is what the queue holds afterwards.
			held int
		}{
			{name: "queue deleted after batch 1", after: func(t *testing.T, c *delayq.Client, q string, k int, _ context.CancelFunc) {
				if k == 1 {
					if _, err := c.Delete(t.Context(), q, -1); err != nil {
						t.Fatal(err)
					}
				}
			}, want: delayq.PushError{Stored: 100, Total: 250}, is: delayq.ErrQueueNotFound, held: -1},
			{name: "maxsize lowered after batch 1", after: func(t *testing.T, c *delayq.Client, q string, k int, _ context.CancelFunc) {
				if k == 1 {
					if err := c.SetAttributes(t.Context(), q, delayq.Attributes{MaxSize: 1024}); err != nil {
						t.Fatal(err)
					}
				}
			}, want: delayq.PushError{Stored: 100, Total: 250, Position: 150}, is: delayq.ErrMessageTooLong, held: 100},
			{name: "interrupted after batch 2", after: func(_ *testing.T, _ *delayq.Client, _ string, k int, cancel context.CancelFunc) {
				if k == 2 {
					cancel()
				}
			}, want: delayq.PushError{Stored: 200, Total: 250}, is: context.Canceled, held: 200},
			{name: "reply of batch 2 lost", lose: 2, want: delayq.PushError{Stored: 100, Uncertain: 100, Total: 250}, is: io.ErrUnexpectedEOF, held: 200},
		} {
			c := newClient(t, b)
			q := strings.ReplaceAll(tc.name, " ", "-")
			mustCreate(t, c, q, delayq.Attributes{MaxSize: -1})
			in := slices.Clone(bodies)
			in[149] = strings.Repeat("x", 1025) // message 150
			ctx, cancel := context.WithCancel(t.Context())
			k := 0
			token := rand.Text()
			opt := delayq.PushManyOptions{
				Due: []delayq.PushOptions{{Token: token}},
				Do: func(ctx context.Context, call func(context.Context) error) error {
					k++
					err := call(ctx)
					if err == nil && k == tc.lose {
						return io.ErrUnexpectedEOF
					}
					return err
				},
				Progress: func([]delayq.Pushed) {
					if tc.after != nil {
						tc.after(t, c, q, k, cancel)
					}
				},
			}
			ps, err := c.PushMany(ctx, q, in, opt)
			cancel()
			var pe *delayq.PushError
			if !errors.As(err, &pe) || !errors.Is(err, tc.is) {
				t.Fatalf("%s: %v, want a PushError wrapping %v", tc.name, err, tc.is)
			}
			got := *pe
			got.Queue, got.Err = "", nil
			if got != tc.want || pe.Queue != q || len(ps) != pe.Stored {
				t.Errorf("%s: %+v with %d results, want %+v", tc.name, got, len(ps), tc.want)
			}
			if tc.held < 0 {
				continue
			}
			st, err := c.Stats(t.Context(), q)
			if err != nil || st.Messages != int64(tc.held) {
				t.Fatalf("%s: the queue holds %+v (%v), want %d messages", tc.name, st, err, tc.held)
			}
			if tc.is == delayq.ErrMessageTooLong {
				continue
			}
			// Resume from the first message not stored (the lost batch was
			// in fact stored whole).
			if _, err := c.PushMany(t.Context(), q, in[pe.Stored+pe.Uncertain:], delayq.PushManyOptions{}); err != nil {
				t.Fatalf("%s: the resume: %v", tc.name, err)
			}
			if got := receiveAll(t, c, q); !slices.Equal(got, in) {
				t.Errorf("%s: after a resume the queue holds %d messages, want the %d given, once each, in order", tc.name, len(got), len(in))
			}
		}
	})
}
