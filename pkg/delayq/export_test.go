package delayq_test

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/delayq/delayqtest"
	"github.com/redis/go-redis/v9"
)

// exportAll returns every message Export passes, by id, and the number of
// pages, failing on an id passed twice.
func exportAll(t *testing.T, c *delayq.Client, q string) (map[string]delayq.Message, int) {
	t.Helper()
	got := map[string]delayq.Message{}
	pages := 0
	n, err := c.Export(context.Background(), q, delayq.PeekOptions{}, func(page []delayq.Message) error {
		pages++
		for _, p := range page {
			if _, dup := got[p.ID]; dup {
				return fmt.Errorf("message %s exported twice", p.ID)
			}
			got[p.ID] = p
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(got) {
		t.Fatalf("Export passed %d messages, says %d", len(got), n)
	}
	return got, pages
}

func toImport(ps map[string]delayq.Message) []delayq.Message {
	var out []delayq.Message
	for _, p := range ps {
		out = append(out, delayq.Message{ID: p.ID, Body: p.Body, VisibleAt: p.VisibleAt, RC: p.RC, FR: p.FR,
			DeadLetteredFrom: p.DeadLetteredFrom, DeadLetteredRC: p.DeadLetteredRC, DeadLetteredAt: p.DeadLetteredAt})
	}
	return out
}

// seq yields msgs, as Import reads them.
func seq(msgs []delayq.Message) iter.Seq2[delayq.Message, error] {
	return func(yield func(delayq.Message, error) bool) {
		for _, m := range msgs {
			if !yield(m, nil) {
				return
			}
		}
	}
}

func importAll(t *testing.T, c *delayq.Client, q string, msgs []delayq.Message) *delayq.ImportResult {
	t.Helper()
	r, err := c.Import(context.Background(), q, seq(msgs))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// queueState is everything of a queue's messages in Redis: per id its
// score, body, rc and fr fields and its index entry.
func queueState(t *testing.T, b redistest.Backend, q string) map[string]string {
	t.Helper()
	ctx := context.Background()
	k := b.Prefix + "rsmq:" + q
	out := map[string]string{}
	zs, err := b.Client.ZRangeWithScores(ctx, k, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range zs {
		id := z.Member.(string)
		f := b.Client.HMGet(ctx, k+":Q", id, id+":rc", id+":fr").Val()
		r, rerr := b.Client.ZScore(ctx, k+":R", id).Result()
		idx := "-"
		if rerr == nil {
			idx = fmt.Sprint(int64(r))
		}
		out[id] = fmt.Sprintf("%d %q %v %v %s", int64(z.Score), f[0], f[1], f[2], idx)
	}
	return out
}

func TestExportImportRoundTrip(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "src", delayq.Attributes{VT: time.Hour})
		// All three states, a body with newlines, and one that is not UTF-8
		// (written by another client).
		mustPush(t, c, "src", "ready\nwith two lines", delayq.PushOptions{})
		mustPush(t, c, "src", "delayed", delayq.PushOptions{Delay: time.Hour})
		mustPush(t, c, "src", "taken", delayq.PushOptions{})
		if r, err := c.Receive(ctx, "src", delayq.ReceiveOptions{N: 1}); err != nil || len(r) != 1 {
			t.Fatalf("receive: %v %v", r, err)
		}
		raw := "0000000000rawrawrawrawrawrawrawra"[:32]
		b.Client.ZAdd(ctx, b.Prefix+"rsmq:src", redis.Z{Score: 1, Member: raw})
		b.Client.HSet(ctx, b.Prefix+"rsmq:src:Q", raw, "\xff\xfebin")
		// Many messages of one score (one millisecond), some received.
		if err := delayqtest.Fill(ctx, c, "src", 2500, delayqtest.FillOptions{Ready: 2, InFlight: 1}); err != nil {
			t.Fatal(err)
		}
		got, pages := exportAll(t, c, "src")
		if len(got) != 2504 {
			t.Fatalf("exported %d messages in %d pages, want 2504", len(got), pages)
		}
		if b.Real() && pages < 3 {
			t.Errorf("exported in %d pages: want pages of about 1,000", pages)
		}
		states := map[string]int{}
		for _, p := range got {
			states[p.State]++
		}
		if states["ready"] != 1669 || states["delayed"] != 1 || states["inflight"] != 834 {
			t.Errorf("states %v", states)
		}
		if got[raw].Body != "\xff\xfebin" {
			t.Errorf("raw body %q", got[raw].Body)
		}

		mustCreate(t, c, "dst", delayq.Attributes{})
		r := importAll(t, c, "dst", toImport(got))
		if r.Imported != 2504 || r.Present != 0 || r.Conflicts != 0 {
			t.Fatalf("import: %+v", r)
		}
		want, have := queueState(t, b, "src"), queueState(t, b, "dst")
		if len(want) != len(have) {
			t.Fatalf("%d messages in src, %d in dst", len(want), len(have))
		}
		for id, w := range want {
			if have[id] != w {
				t.Fatalf("message %s: src %s, dst %s", id, w, have[id])
			}
		}
		s, err := c.Stats(ctx, "dst")
		if err != nil {
			t.Fatal(err)
		}
		if s.Messages != 2504 || s.InFlight != 834 || s.Delayed != 1 || s.TotalSent != 2504 || s.TotalRecv != 0 || !s.SplitExact {
			t.Errorf("dst stats %+v", s)
		}

		// Again: everything is there already, nothing changes.
		before := dump(t, b.Client, b.Prefix+"rsmq:dst")
		r = importAll(t, c, "dst", toImport(got))
		if r.Imported != 0 || r.Present != 2504 || r.Conflicts != 0 {
			t.Fatalf("second import: imported %d, present %d, conflicts %d", r.Imported, r.Present, r.Conflicts)
		}
		if after := dump(t, b.Client, b.Prefix+"rsmq:dst"); after != before {
			t.Errorf("a second import changed the queue")
		}
	})
}

func TestImportRefuses(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{MaxSize: 1024})
		id := mustPush(t, c, "q", "original", delayq.PushOptions{})
		now := time.Now()
		fresh := "0000000001" + "abcdefghijABCDEFGHIJ01"
		before := dump(t, b.Client, b.Prefix)

		// A conflict is left alone and reported; the rest of the batch is imported.
		r, err := c.Import(ctx, "q", seq([]delayq.Message{{ID: id, Body: "changed", VisibleAt: now}, {ID: fresh, Body: "new", VisibleAt: now}}))
		if err != nil || r.Imported != 1 || r.Conflicts != 1 || len(r.ConflictIDs) != 1 || r.ConflictIDs[0] != id {
			t.Fatalf("conflict: %+v %v", r, err)
		}
		if body := b.Client.HGet(ctx, b.Prefix+"rsmq:q:Q", id).Val(); body != "original" {
			t.Fatalf("conflict overwrote the body: %q", body)
		}
		before = dump(t, b.Client, b.Prefix)
		for name, msgs := range map[string][]delayq.Message{
			"too long":    {{ID: "0000000002" + "abcdefghijABCDEFGHIJ01", Body: "ok", VisibleAt: now}, {ID: "0000000003" + "abcdefghijABCDEFGHIJ01", Body: string(make([]byte, 1025)), VisibleAt: now}},
			"bad id":      {{ID: "short", Body: "x", VisibleAt: now}},
			"no due":      {{ID: "0000000004" + "abcdefghijABCDEFGHIJ01", Body: "x"}},
			"negative rc": {{ID: "0000000005" + "abcdefghijABCDEFGHIJ01", Body: "x", VisibleAt: now, RC: -1}},
		} {
			if _, err := c.Import(ctx, "q", seq(msgs)); !errors.Is(err, delayq.ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", name, err)
			}
		}
		if _, err := c.Import(ctx, "nosuch", seq([]delayq.Message{{ID: fresh, Body: "x", VisibleAt: now}})); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Errorf("missing queue: %v", err)
		}
		if after := dump(t, b.Client, b.Prefix); after != before {
			t.Errorf("a refused import wrote:\n%s\nwant\n%s", after, before)
		}
		// An id twice (an export may repeat one) ends the batch: the
		// second copy finds the first present.
		twice := "0000000006" + "abcdefghijABCDEFGHIJ01"
		r, err = c.Import(ctx, "q", seq([]delayq.Message{{ID: twice, Body: "x", VisibleAt: now}, {ID: twice, Body: "x", VisibleAt: now}}))
		if err != nil || r.Imported != 1 || r.Present != 1 || r.Conflicts != 0 {
			t.Errorf("an id twice: %+v %v", r, err)
		}
	})
}

// TestImportStopsPartWay: an import of 300 messages (three batches) that
// stops at message 250 says exactly what is done, the queue holds exactly
// messages 1-200 (nothing of batch 3), and an import from message 201 on
// resumes it.
func TestImportStopsPartWay(t *testing.T) {
	errSource := errors.New("line 251: not valid JSON")
	for _, tc := range []struct {
		name string
		// src yields msgs, and may fail or act part way.
		src                                func(c *delayq.Client, cancel func(), msgs []delayq.Message) iter.Seq2[delayq.Message, error]
		long                               int // the body of message 250, in bytes
		stored, uncertain, total, position int
		err                                error
	}{
		{"a body over maxsize", nil, 1025, 200, 0, 250, 250, delayq.ErrMessageTooLong},
		// maxsize lowered after Import read it: the script refuses batch 3 whole.
		{"maxsize lowered meanwhile", func(c *delayq.Client, _ func(), msgs []delayq.Message) iter.Seq2[delayq.Message, error] {
			return func(yield func(delayq.Message, error) bool) {
				for i, m := range msgs {
					if i == 150 {
						if err := c.SetAttributes(context.Background(), "q", delayq.Attributes{MaxSize: 1024}); err != nil {
							yield(delayq.Message{}, err)
							return
						}
					}
					if !yield(m, nil) {
						return
					}
				}
			}
		}, 2000, 200, 0, 300, 250, delayq.ErrMessageTooLong},
		{"a bad input line", func(_ *delayq.Client, _ func(), msgs []delayq.Message) iter.Seq2[delayq.Message, error] {
			return func(yield func(delayq.Message, error) bool) {
				for _, m := range msgs[:249] {
					if !yield(m, nil) {
						return
					}
				}
				yield(delayq.Message{}, errSource)
			}
		}, 1, 200, 0, 249, 0, errSource},
		// Cancelled while batch 2 is read: it stops before writing it.
		{"interrupted", func(_ *delayq.Client, cancel func(), msgs []delayq.Message) iter.Seq2[delayq.Message, error] {
			return func(yield func(delayq.Message, error) bool) {
				for i, m := range msgs {
					if i == 150 {
						cancel()
					}
					if !yield(m, nil) {
						return
					}
				}
			}
		}, 1, 100, 0, 200, 0, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			redistest.Run(t, func(t *testing.T, b redistest.Backend) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				c := newClient(t, b)
				mustCreate(t, c, "q", delayq.Attributes{})
				msgs := make([]delayq.Message, 300)
				for i := range msgs {
					msgs[i] = delayq.Message{ID: fmt.Sprintf("0000000000part%018d", i+1), Body: fmt.Sprint("m", i+1), VisibleAt: time.UnixMilli(int64(1000 + i)), RC: int64(i % 2)}
				}
				msgs[249].Body = strings.Repeat("x", tc.long)
				src := seq(msgs)
				if tc.src != nil {
					src = tc.src(c, cancel, msgs)
				} else if err := c.SetAttributes(ctx, "q", delayq.Attributes{MaxSize: 1024}); err != nil {
					t.Fatal(err)
				}
				r, err := c.Import(ctx, "q", src)
				var pe *delayq.PushError
				if !errors.As(err, &pe) || !errors.Is(err, tc.err) || pe.Queue != "q" || pe.Stored != tc.stored || pe.Uncertain != tc.uncertain || pe.Total != tc.total || pe.Position != tc.position {
					t.Fatalf("import: %v (%+v), want stored %d, total %d, position %d, %v", err, pe, tc.stored, tc.total, tc.position, tc.err)
				}
				if r == nil || r.Imported != tc.stored || r.Present != 0 || r.Conflicts != 0 {
					t.Fatalf("result %+v, want %d imported", r, tc.stored)
				}
				// The queue holds messages 1 to Stored, and nothing else.
				ids, err := b.Client.ZRange(context.Background(), b.Prefix+"rsmq:q", 0, -1).Result()
				if err != nil {
					t.Fatal(err)
				}
				want := make([]string, tc.stored)
				for i := range want {
					want[i] = msgs[i].ID
				}
				if !slices.Equal(ids, want) {
					t.Fatalf("the queue holds %d messages (%v…), want messages 1-%d", len(ids), ids[:min(len(ids), 3)], tc.stored)
				}
				st, err := c.Stats(context.Background(), "q")
				if err != nil || st.Messages != int64(tc.stored) || st.TotalSent != int64(tc.stored) {
					t.Fatalf("stats %+v %v", st, err)
				}
				// Resume from message Stored+1, the bad body mended.
				msgs[249].Body = "m250"
				if err := c.SetAttributes(context.Background(), "q", delayq.Attributes{MaxSize: 65536}); err != nil {
					t.Fatal(err)
				}
				r, err = c.Import(context.Background(), "q", seq(msgs[pe.Stored:]))
				if err != nil || r.Imported != 300-tc.stored || r.Present != 0 {
					t.Fatalf("resume: %+v %v", r, err)
				}
				if st, err := c.Stats(context.Background(), "q"); err != nil || st.Messages != 300 || st.TotalSent != 300 {
					t.Fatalf("after the resume: %+v %v", st, err)
				}
			})
		})
	}
}

// TestExportLive: consumers receive and ack while an export runs; every
// message present for the whole export is exported, and ids exported
// twice (possible only when the hash shrinks) are counted.
func TestExportLive(t *testing.T) {
	b := redistest.Real(t)
	ctx := context.Background()
	c := newClient(t, b)
	mustCreate(t, c, "live", delayq.Attributes{VT: time.Hour})
	const n = 5000
	if err := delayqtest.Fill(ctx, c, "live", n, delayqtest.FillOptions{Ready: 1}); err != nil {
		t.Fatal(err)
	}
	// The first 200 by due time are consumed during the export (received,
	// half of them acked); the others stay for the whole export.
	first, err := c.Peek(ctx, "live", delayq.PeekOptions{N: 200})
	if err != nil {
		t.Fatal(err)
	}
	consumed := map[string]bool{}
	for _, p := range first {
		consumed[p.ID] = true
	}
	seen := map[string]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	wg.Go(func() {
		<-start
		for i := 0; i < 20; i++ {
			r, err := c.Receive(ctx, "live", delayq.ReceiveOptions{N: 10})
			if err != nil {
				t.Error(err)
				return
			}
			for j, m := range r {
				if j%2 == 0 {
					c.Ack(ctx, "live", m.Receipt)
				}
			}
		}
	})
	pages := 0
	_, err = c.Export(ctx, "live", delayq.PeekOptions{}, func(page []delayq.Message) error {
		if pages++; pages == 1 {
			close(start)
		}
		for _, p := range page {
			seen[p.ID]++
		}
		return nil
	})
	if pages == 0 {
		close(start)
	}
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	missing, twice := 0, 0
	all := b.Client.ZRange(ctx, b.Prefix+"rsmq:live", 0, -1).Val()
	for _, id := range all {
		if !consumed[id] && seen[id] == 0 {
			missing++
		}
	}
	for _, k := range seen {
		if k > 1 {
			twice++
		}
	}
	t.Logf("live export of %d messages in %d pages: %d exported, %d twice", n, pages, len(seen), twice)
	if missing > 0 {
		t.Errorf("%d messages present for the whole export were not exported", missing)
	}
}
