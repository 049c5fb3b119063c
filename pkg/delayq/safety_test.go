package delayq_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/delayq/delayqtest"
	"github.com/redis/go-redis/v9"
)

// dump returns every key under prefix with its type and contents, to tell
// whether an operation changed anything.
func dump(t testing.TB, rdb redis.UniversalClient, prefix string) string {
	t.Helper()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, k := range sortedStrings(keys) {
		ty := rdb.Type(ctx, k).Val()
		var v any
		switch ty {
		case "string":
			v = rdb.Get(ctx, k).Val()
		case "hash":
			v = rdb.HGetAll(ctx, k).Val()
		case "zset":
			v = rdb.ZRangeWithScores(ctx, k, 0, -1).Val()
		case "set":
			v = sortedStrings(rdb.SMembers(ctx, k).Val())
		case "list":
			v = rdb.LRange(ctx, k, 0, -1).Val()
		}
		fmt.Fprintf(&b, "%s %s %v\n", k, ty, v)
	}
	return b.String()
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestLayoutNamesRefused(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		if err := c.Create(ctx, "QUEUES", delayq.Attributes{}); !errors.Is(err, delayq.ErrInvalid) {
			t.Fatalf("create QUEUES: %v, want ErrInvalid", err)
		}
		if _, err := c.Delete(ctx, "QUEUES", -1); !errors.Is(err, delayq.ErrInvalid) {
			t.Fatalf("delete QUEUES: %v, want ErrInvalid", err)
		}
		if _, err := c.Push(ctx, "QUEUES", "x", delayq.PushOptions{}); !errors.Is(err, delayq.ErrInvalid) {
			t.Fatalf("push QUEUES: %v, want ErrInvalid", err)
		}
		mustCreate(t, c, "queues", delayq.Attributes{}) // case matters: rsmq:queues is not rsmq:QUEUES
		if n := b.Client.Exists(ctx, b.Prefix+"rsmq:QUEUES:Q").Val(); n != 0 {
			t.Fatal("a QUEUES hash was written")
		}
	})
}

func TestPushRefusesInvalidUTF8(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		before := dump(t, b.Client, b.Prefix)
		if _, err := c.Push(ctx, "q", "caf\xe9", delayq.PushOptions{}); !errors.Is(err, delayq.ErrInvalid) {
			t.Fatalf("push of Latin-1 bytes: %v, want ErrInvalid", err)
		}
		if after := dump(t, b.Client, b.Prefix); after != before {
			t.Fatalf("a refused push changed:\n%s\nto\n%s", before, after)
		}
	})
}

// rsmqReceive does to message id what rsmq's receiveMessage does, with
// plain commands: chatq's index does not learn of it.
func rsmqReceive(t *testing.T, rdb redis.UniversalClient, prefix, q, id string, visible int64) {
	t.Helper()
	ctx := context.Background()
	k := prefix + "rsmq:" + q
	rdb.ZAdd(ctx, k, redis.Z{Score: float64(visible), Member: id})
	rdb.HIncrBy(ctx, k+":Q", "totalrecv", 1)
	if rdb.HIncrBy(ctx, k+":Q", id+":rc", 1).Val() == 1 {
		rdb.HSet(ctx, k+":Q", id+":fr", time.Now().UnixMilli())
	}
}

func TestStatsIndex(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		ids := make([]string, 6)
		for i := range ids {
			ids[i] = mustPush(t, c, "q", fmt.Sprint(i), delayq.PushOptions{})
		}
		mustPush(t, c, "q", "later", delayq.PushOptions{Delay: time.Hour})
		r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{N: 3, VT: time.Hour})
		if err != nil || len(r) != 3 {
			t.Fatalf("receive: %v %v", r, err)
		}
		check := func(what string, ready, delayed, inflight int64) {
			t.Helper()
			s, err := c.Stats(ctx, "q")
			if err == nil && !s.SplitExact {
				if err = c.Reindex(ctx, "q"); err == nil {
					s, err = c.Stats(ctx, "q")
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Ready != ready || s.Delayed != delayed || s.InFlight != inflight || !s.SplitExact ||
				s.Messages != ready+delayed+inflight {
				t.Fatalf("%s: stats = ready %d delayed %d inflight %d of %d exact %v, want %d %d %d",
					what, s.Ready, s.Delayed, s.InFlight, s.Messages, s.SplitExact, ready, delayed, inflight)
			}
		}
		check("after receive", 3, 1, 3)
		// A retry makes one due again, an ack removes one.
		if _, err := c.ChangeVisibility(ctx, "q", r[0].ID, 0); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Ack(ctx, "q", r[1].ID); err != nil {
			t.Fatal(err)
		}
		check("after retry and ack", 4, 1, 1)
		// Another client (rsmq) receives a due message: totalrecv moves
		// without chatq's rsync, so Stats rebuilds the index.
		ready, err := c.Peek(ctx, "q", delayq.PeekOptions{N: 10})
		if err != nil {
			t.Fatal(err)
		}
		rsmqReceive(t, b.Client, b.Prefix, "q", ready[0].ID, time.Now().Add(time.Hour).UnixMilli())
		check("after an rsmq receive", 3, 1, 2)
		// A queue rsmq created (no rsync) is indexed on first stats.
		k := b.Prefix + "rsmq:n"
		b.Client.HSet(ctx, k+":Q", "vt", 30, "delay", 0, "maxsize", 65536, "created", 1, "modified", 1)
		b.Client.SAdd(ctx, b.Prefix+"rsmq:QUEUES", "n")
		id := mustPush(t, c, "n", "x", delayq.PushOptions{})
		mustPush(t, c, "n", "y", delayq.PushOptions{})
		rsmqReceive(t, b.Client, b.Prefix, "n", id, time.Now().Add(time.Hour).UnixMilli())
		if s, err := c.Stats(ctx, "n"); err != nil || s.SplitExact || s.Messages != 2 || s.Ready != 1 {
			t.Fatalf("stats of rsmq's queue before reindex = %+v, %v", s, err)
		}
		if err := c.Reindex(ctx, "n"); err != nil {
			t.Fatal(err)
		}
		s, err := c.Stats(ctx, "n")
		if err != nil || s.InFlight != 1 || s.Ready != 1 || !s.SplitExact {
			t.Fatalf("stats of rsmq's queue = %+v, %v", s, err)
		}
		// Attributes read only the hash.
		at, err := c.Stats(ctx, "n")
		if err != nil || at.MaxSize != 65536 || at.TotalSent != 2 || at.TotalRecv != 1 {
			t.Fatalf("attributes = %+v, %v", at, err)
		}
		if _, err := c.Stats(ctx, "missing"); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Fatalf("attributes of a missing queue: %v", err)
		}
	})
}

func TestFillAndStats(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		if err := delayqtest.Fill(ctx, c, "q", 3001, delayqtest.FillOptions{}); err != nil {
			t.Fatal(err)
		}
		s, err := c.Stats(ctx, "q")
		if err != nil || s.Messages != 3001 || s.Ready != 1001 || s.Delayed != 1000 || s.InFlight != 1000 || !s.SplitExact ||
			s.TotalSent != 3001 || s.TotalRecv != 1000 {
			t.Fatalf("stats = %+v, %v", s, err)
		}
		// Peek pages through more than one call, in visible-at order, and
		// stops at the end of the queue.
		ps, err := c.Peek(ctx, "q", delayq.PeekOptions{N: 1500})
		if err != nil || len(ps) != 1500 {
			t.Fatalf("peek 1500: %d, %v", len(ps), err)
		}
		seen := map[string]bool{}
		for i, p := range ps {
			if seen[p.ID] || i > 0 && p.VisibleAt.Before(ps[i-1].VisibleAt) {
				t.Fatalf("peek: message %d (%s) repeated or out of order", i, p.ID)
			}
			seen[p.ID] = true
		}
		if ps, err := c.Peek(ctx, "q", delayq.PeekOptions{N: 5000}); err != nil || len(ps) != 3001 {
			t.Fatalf("peek past the end: %d, %v", len(ps), err)
		}
		r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{N: 10, Pop: true})
		if err != nil || len(r) != 10 {
			t.Fatalf("receive after fill: %v", err)
		}
	})
}

// A receive or an ack of many messages runs in calls of at most 100.
func TestBigReceiveAndAck(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q", delayq.Attributes{})
		if err := delayqtest.Fill(ctx, c, "q", 250, delayqtest.FillOptions{Ready: 1}); err != nil {
			t.Fatal(err)
		}
		r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{N: 1000, VT: time.Hour})
		if err != nil || len(r) != 250 {
			t.Fatalf("receive 1000 of 250: %d, %v", len(r), err)
		}
		refs := make([]string, 0, 251)
		seen := map[string]bool{}
		for _, m := range r {
			if seen[m.ID] {
				t.Fatalf("%s received twice", m.ID)
			}
			seen[m.ID] = true
			refs = append(refs, m.Receipt)
		}
		res, err := c.Ack(ctx, "q", append(refs, "0123456789abcdefghijklmnopqrstuv")...)
		if !errors.Is(err, delayq.ErrMessageNotFound) || res.Acked != 250 || len(res.Missing) != 1 || res.Missing[0] != "0123456789abcdefghijklmnopqrstuv" {
			t.Fatalf("ack of 251: %+v, %v", res, err)
		}
		if s, err := c.Stats(ctx, "q"); err != nil || s.Messages != 0 || s.TotalRecv != 250 {
			t.Fatalf("stats after: %+v, %v", s, err)
		}
	})
}

func TestPurgeAtOnce(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "q2", delayq.Attributes{})
		mustCreate(t, c, "q", delayq.Attributes{MaxReceives: 3, DeadLetter: "q2"})
		if err := delayqtest.Fill(ctx, c, "q", 1500, delayqtest.FillOptions{}); err != nil {
			t.Fatal(err)
		}
		k := b.Prefix + "rsmq:q"
		b.Client.HSet(ctx, k+":Q", "totaldead", 7) // as seven dead-letter moves would
		before := b.Client.HMGet(ctx, k+":Q", "vt", "delay", "maxsize", "created", "modified", "totalsent", "totalrecv", "maxreceives", "deadletter", "totaldead").Val()
		// A body left without its ZSET entry by a crashed writer goes too.
		b.Client.HSet(ctx, k+":Q", "0000000001AAAAAAAAAAAAAAAAAAAAAA", "orphan", "0000000001AAAAAAAAAAAAAAAAAAAAAA:rc", "2")
		n, err := c.Purge(ctx, "q", -1)
		if err != nil || n != 1500 {
			t.Fatalf("purge = %d, %v", n, err)
		}
		if n := b.Client.Exists(ctx, k, k+":R").Val(); n != 0 {
			t.Fatalf("%d of the ZSET and the index left after purge", n)
		}
		fields := sortedStrings(b.Client.HKeys(ctx, k+":Q").Val())
		if strings.Join(fields, " ") != "created deadletter delay maxreceives maxsize modified rsync totaldead totalrecv totalsent vt" {
			t.Fatalf("hash after purge = %v", fields)
		}
		after := b.Client.HMGet(ctx, k+":Q", "vt", "delay", "maxsize", "created", "modified", "totalsent", "totalrecv", "maxreceives", "deadletter", "totaldead").Val()
		if fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("attributes %v became %v", before, after)
		}
		id := mustPush(t, c, "q", "after", delayq.PushOptions{})
		s, err := c.Stats(ctx, "q")
		if err != nil || s.Messages != 1 || s.Ready != 1 || !s.SplitExact {
			t.Fatalf("stats after purge and push = %+v, %v", s, err)
		}
		if r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{Pop: true}); err != nil || len(r) != 1 || r[0].ID != id {
			t.Fatalf("receive after purge: %v %v", r, err)
		}
		if _, err := c.Purge(ctx, "missing", -1); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Fatalf("purge of a missing queue: %v", err)
		}
	})
}

// Bad state found by a script means nothing was written.
func TestCreateDeleteCheckFirst(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		reg := b.Prefix + "rsmq:QUEUES"
		mustCreate(t, c, "q", delayq.Attributes{})
		mustPush(t, c, "q", "x", delayq.PushOptions{})
		// A registry of the wrong type.
		b.Client.Rename(ctx, reg, b.Prefix+"saved")
		b.Client.Set(ctx, reg, "junk", 0)
		before := dump(t, b.Client, b.Prefix)
		if err := c.Create(ctx, "new", delayq.Attributes{}); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Fatalf("create with a string registry: %v", err)
		}
		if _, err := c.Delete(ctx, "q", -1); err == nil {
			t.Fatal("delete with a string registry succeeded")
		}
		if after := dump(t, b.Client, b.Prefix); after != before {
			t.Fatalf("a failed create/delete changed:\n%s\nto\n%s", before, after)
		}
		b.Client.Del(ctx, reg)
		b.Client.Rename(ctx, b.Prefix+"saved", reg)
		// A wrong-type index key: delete refuses before deleting anything.
		b.Client.Set(ctx, b.Prefix+"rsmq:q:R", "junk", 0)
		before = dump(t, b.Client, b.Prefix)
		if _, err := c.Delete(ctx, "q", -1); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Fatalf("delete with a string index: %v", err)
		}
		if after := dump(t, b.Client, b.Prefix); after != before {
			t.Fatalf("a failed delete changed:\n%s\nto\n%s", before, after)
		}
		b.Client.Del(ctx, b.Prefix+"rsmq:q:R")
		if _, err := c.Delete(ctx, "q", -1); err != nil {
			t.Fatal(err)
		}
		if n := b.Client.Exists(ctx, b.Prefix+"rsmq:q", b.Prefix+"rsmq:q:Q").Val(); n != 0 {
			t.Fatalf("%d keys left after delete", n)
		}
	})
}

// TestACL runs on a real Redis 7 only: scripts check the user's
// permissions before writing.
func TestACL(t *testing.T) {
	b := redistest.Real(t)
	ctx := context.Background()
	if v := b.Client.Do(ctx, "ACL", "WHOAMI").Err(); v != nil {
		t.Skipf("no ACL: %v", v)
	}
	admin := newClient(t, b)
	mustCreate(t, admin, "q", delayq.Attributes{})
	user := func(name string, rules ...any) *delayq.Client {
		t.Helper()
		return delayq.New(redistest.ACLUser(t, b, name, rules...), delayq.Options{Prefix: b.Prefix})
	}
	// Redis 7's default for a new user: no channel.
	nopub := user("chatqtest-nopub", "~*", "+@all", "resetchannels")
	for i := 0; i < 3; i++ {
		p, err := nopub.Push(ctx, "q", "once", delayq.PushOptions{})
		if err != nil {
			t.Fatalf("push without channel permission: %v", err)
		}
		if p.Notified {
			t.Fatal("push says it notified without permission")
		}
	}
	if ps, err := nopub.PushMany(ctx, "q", []string{"two", "more"}, delayq.PushManyOptions{}); err != nil || len(ps) != 2 || ps[0].Notified || ps[1].Notified {
		t.Fatalf("push many without channel permission: %+v %v", ps, err)
	}
	if n := b.Client.ZCard(ctx, b.Prefix+"rsmq:q").Val(); n != 5 {
		t.Fatalf("5 pushes stored %d messages", n)
	}
	if p, err := admin.Push(ctx, "q", "x", delayq.PushOptions{}); err != nil || !p.Notified {
		t.Fatalf("push with permission: %+v %v", p, err)
	}
	// Retry and a dead-letter move publish best-effort too.
	mustCreate(t, admin, "dead", delayq.Attributes{})
	mustCreate(t, admin, "once", delayq.Attributes{MaxReceives: 1, DeadLetter: "dead"})
	mustPush(t, admin, "once", "m", delayq.PushOptions{})
	r, err := nopub.Receive(ctx, "once", delayq.ReceiveOptions{VT: -1})
	if err != nil || len(r) != 1 {
		t.Fatalf("receive without channel permission: %v %v", r, err)
	}
	if _, err := nopub.ChangeVisibility(ctx, "once", r[0].ID, 0); err != nil {
		t.Fatalf("retry without channel permission: %v", err)
	}
	if r, moved, _, err := receiveEvents(ctx, nopub, "once", delayq.ReceiveOptions{}); err != nil || moved != 1 {
		t.Fatalf("dead-letter move without channel permission: %+v %v", r, err)
	}
	if n := b.Client.ZCard(ctx, b.Prefix+"rsmq:dead").Val(); n != 1 {
		t.Fatalf("dead-letter queue holds %d", n)
	}
	// A user who may write queues but not the registry: create refuses
	// before writing, delete too.
	noreg := user("chatqtest-noreg", "~*", "+@all", "-sadd", "-srem", "allchannels")
	before := dump(t, b.Client, b.Prefix)
	if err := noreg.Create(ctx, "new", delayq.Attributes{}); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("create without SADD: %v", err)
	}
	if _, err := noreg.Delete(ctx, "q", -1); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("delete without SREM: %v", err)
	}
	if after := dump(t, b.Client, b.Prefix); after != before {
		t.Fatalf("refused create/delete changed:\n%s\nto\n%s", before, after)
	}
	// A read-only user gets stats (the index cannot be rebuilt: the split
	// is reported as possibly off).
	ro := user("chatqtest-ro", "~*", "+@read", "+time", "+evalsha", "+eval", "+script")
	b.Client.HIncrBy(ctx, b.Prefix+"rsmq:q:Q", "totalrecv", 1) // as an rsmq receive would
	s, err := ro.Stats(ctx, "q")
	if err != nil || s.Messages != 6 || s.SplitExact {
		t.Fatalf("read-only stats = %+v, %v", s, err)
	}
	before = dump(t, b.Client, b.Prefix)
	if _, err := ro.PushMany(ctx, "q", []string{"x", "y"}, delayq.PushManyOptions{}); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("read-only push many: %v", err)
	}
	if after := dump(t, b.Client, b.Prefix); after != before {
		t.Fatalf("refused push many changed:\n%s\nto\n%s", before, after)
	}
	if err := ro.Reindex(ctx, "q"); err == nil || !strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("read-only reindex: %v", err)
	}
}
