package stream_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/stream"
	"github.com/redis/go-redis/v9"
)

// fixture is a private redis-server, a client, and the stream kind under
// a prefix.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	rdb    *redis.Client
	kind   *stream.Kind
	prefix string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	s := redistest.StartServer(t)
	rdb := s.Client()
	const prefix = "t:"
	return &fixture{t: t, ctx: context.Background(), rdb: rdb, prefix: prefix,
		kind: stream.New(queues.Env{RDB: rdb, Prefix: prefix})}
}

// open opens KEY/GROUP (key without the prefix).
func (f *fixture) open(key, group string) *stream.Queue {
	f.t.Helper()
	q, err := f.kind.OpenQueue(stream.Name(key, group))
	if err != nil {
		f.t.Fatal(err)
	}
	return q
}

// fill adds n entries to the stream at key (without the prefix), each
// with fields n=<i> and body=<key>-<i>, and returns their ids.
func (f *fixture) fill(key string, n int) []string {
	f.t.Helper()
	var ids []string
	for i := range n {
		id, err := f.rdb.XAdd(f.ctx, &redis.XAddArgs{Stream: f.prefix + key,
			Values: []string{"n", fmt.Sprint(i), "body", fmt.Sprintf("%s-%d", key, i)}}).Result()
		if err != nil {
			f.t.Fatal(err)
		}
		ids = append(ids, id)
	}
	return ids
}

// group creates a consumer group reading the stream from its start.
func (f *fixture) group(key, group string) {
	f.t.Helper()
	if err := f.rdb.XGroupCreateMkStream(f.ctx, f.prefix+key, group, "0").Err(); err != nil {
		f.t.Fatal(err)
	}
}

// read is a consumer's XREADGROUP of up to count new entries (no block).
func (f *fixture) read(key, group, consumer string, count int64) []redis.XMessage {
	f.t.Helper()
	return f.readFrom(key, group, consumer, count, ">")
}

// readFrom is XREADGROUP from id: ">" new entries, "0" the consumer's own
// pending history.
func (f *fixture) readFrom(key, group, consumer string, count int64, id string) []redis.XMessage {
	f.t.Helper()
	res, err := f.rdb.XReadGroup(f.ctx, &redis.XReadGroupArgs{Group: group, Consumer: consumer,
		Streams: []string{f.prefix + key, id}, Count: count, Block: -1}).Result()
	if err == redis.Nil {
		return nil
	}
	if err != nil {
		f.t.Fatal(err)
	}
	return res[0].Messages
}

func (f *fixture) ack(key, group string, msgs []redis.XMessage) {
	f.t.Helper()
	for _, m := range msgs {
		if n, err := f.rdb.XAck(f.ctx, f.prefix+key, group, m.ID).Result(); err != nil || n != 1 {
			f.t.Fatalf("XACK %s: %d, %v", m.ID, n, err)
		}
	}
}

// info is the group's XINFO GROUPS row.
func (f *fixture) info(key, group string) redis.XInfoGroup {
	f.t.Helper()
	gs, err := f.rdb.XInfoGroups(f.ctx, f.prefix+key).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	for _, g := range gs {
		if g.Name == group {
			return g
		}
	}
	f.t.Fatalf("no group %q", group)
	return redis.XInfoGroup{}
}

// pending is the group's XPENDING summary count.
func (f *fixture) pending(key, group string) int64 {
	f.t.Helper()
	p, err := f.rdb.XPending(f.ctx, f.prefix+key, group).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	return p.Count
}

// pendingOf is the group's PEL entry of id (nil when not pending).
func (f *fixture) pendingOf(key, group, id string) *redis.XPendingExt {
	f.t.Helper()
	p, err := f.rdb.XPendingExt(f.ctx, &redis.XPendingExtArgs{Stream: f.prefix + key, Group: group, Start: id, End: id, Count: 1}).Result()
	if err != nil {
		f.t.Fatal(err)
	}
	if len(p) == 0 {
		return nil
	}
	return &p[0]
}

func (f *fixture) counts(q *stream.Queue) *queues.Counts {
	f.t.Helper()
	c, err := q.Counts(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// scan returns every job a Scan passes.
func (f *fixture) scan(q queues.Queue, opt queues.ScanOptions) []queues.Job {
	f.t.Helper()
	var out []queues.Job
	if err := q.Scan(f.ctx, opt, func(jobs []queues.Job) error {
		out = append(out, jobs...)
		return nil
	}); err != nil {
		f.t.Fatal(err)
	}
	return out
}

func jobIDs(jobs []queues.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func msgIDs(msgs []redis.XMessage) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.ID
	}
	return out
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func n(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// sortedIDs sorts entry ids as the server orders them (by number: 5-10
// after 5-9).
func sortedIDs(s []string) []string {
	s = slices.Clone(s)
	key := func(id string) (ms, seq uint64) {
		fmt.Sscanf(id, "%d-%d", &ms, &seq)
		return ms, seq
	}
	slices.SortFunc(s, func(a, b string) int {
		am, as := key(a)
		bm, bs := key(b)
		if c := cmp.Compare(am, bm); c != 0 {
			return c
		}
		return cmp.Compare(as, bs)
	})
	return s
}
