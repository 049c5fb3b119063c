package delayq_test

import (
	"context"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/redis/go-redis/v9"
)

// TestCorruptKeys corrupts a random key of a queue (wrong type, garbage
// field values, odd members) and runs a random operation: it must either
// succeed or fail without changing any key, and the server must answer a
// PING at once afterwards (no script left running). CHATQ_CORRUPT_ROUNDS
// sets the number of rounds (default 300), CHATQ_CORRUPT_SEED the seed.
func TestCorruptKeys(t *testing.T) {
	t.Parallel()
	rounds := 300
	if v := os.Getenv("CHATQ_CORRUPT_ROUNDS"); v != "" {
		rounds, _ = strconv.Atoi(v)
	}
	seed := time.Now().UnixNano()
	if v := os.Getenv("CHATQ_CORRUPT_SEED"); v != "" {
		seed, _ = strconv.ParseInt(v, 10, 64)
	}
	t.Logf("seed %d (CHATQ_CORRUPT_SEED to repeat)", seed)
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		rng := rand.New(rand.NewSource(seed))
		ctx := context.Background()
		n := rounds
		if !b.Real() {
			n = rounds / 3 // the embedded server is slower; real Redis is the truth
		}
		for round := 0; round < n; round++ {
			prefix := fmt.Sprintf("%sc%d:", b.Prefix, round)
			c := delayq.New(b.Client, delayq.Options{Prefix: prefix})
			ids := corruptSetup(t, c)
			what := corrupt(t, rng, b.Client, prefix, ids)
			before := dump(t, b.Client, prefix)
			op, err := randomOp(ctx, rng, c, ids)
			if err != nil {
				if after := dump(t, b.Client, prefix); after != before {
					t.Fatalf("round %d: %s, then %s failed (%v) but changed keys:\n%s\nto\n%s", round, what, op, err, before, after)
				}
			}
			pctx, cancel := context.WithTimeout(ctx, time.Second)
			if err := b.Client.Ping(pctx).Err(); err != nil {
				t.Fatalf("round %d: %s, then %s: server not answering: %v", round, what, op, err)
			}
			cancel()
			if testing.Verbose() {
				t.Logf("round %d: %s; %s: %v", round, what, op, err)
			}
		}
	})
}

// corruptSetup makes queue q (dead-lettering to dlq after 2 receives) with
// a ready, a delayed, an in-flight message and one received twice.
func corruptSetup(t *testing.T, c *delayq.Client) []string {
	t.Helper()
	ctx := context.Background()
	mustCreate(t, c, "dlq", delayq.Attributes{})
	mustCreate(t, c, "q", delayq.Attributes{MaxReceives: 2, DeadLetter: "dlq"})
	var ids []string
	ids = append(ids, mustPush(t, c, "q", "in flight", delayq.PushOptions{}))
	r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{VT: time.Hour})
	if err != nil || len(r) != 1 {
		t.Fatalf("setup receive: %v", err)
	}
	ids = append(ids, mustPush(t, c, "q", "twice", delayq.PushOptions{}))
	for i := 0; i < 2; i++ {
		if _, err := c.Receive(ctx, "q", delayq.ReceiveOptions{VT: -1}); err != nil {
			t.Fatal(err)
		}
	}
	ids = append(ids, mustPush(t, c, "q", "ready", delayq.PushOptions{}))
	ids = append(ids, mustPush(t, c, "q", "delayed", delayq.PushOptions{Delay: time.Hour}))
	mustPush(t, c, "dlq", "dead", delayq.PushOptions{})
	return ids
}

var garbage = []string{"", "abc", "-1", "3.5", "1e400", "nan", "99999999999999999999", "0x10", " 1", "inf"}

// corrupt damages one key or field under prefix and says what it did.
func corrupt(t *testing.T, rng *rand.Rand, rdb *redis.Client, prefix string, ids []string) string {
	t.Helper()
	ctx := context.Background()
	keys := []string{"rsmq:QUEUES", "rsmq:q", "rsmq:q:Q", "rsmq:q:R", "rsmq:dlq", "rsmq:dlq:Q", "rsmq:dlq:R", "rsmq:new:Q", "rsmq:new:R"}
	k := prefix + keys[rng.Intn(len(keys))]
	switch rng.Intn(3) {
	case 0: // the wrong type
		rdb.Del(ctx, k)
		switch rng.Intn(5) {
		case 0:
			rdb.Set(ctx, k, garbage[rng.Intn(len(garbage))], 0)
		case 1:
			rdb.RPush(ctx, k, "x")
		case 2:
			rdb.SAdd(ctx, k, "x")
		case 3:
			rdb.HSet(ctx, k, "x", "y")
		case 4:
			rdb.ZAdd(ctx, k, redis.Z{Score: 1, Member: "x"})
		}
		return "retyped " + k
	case 1: // a garbage field in a hash
		hk := prefix + []string{"rsmq:q:Q", "rsmq:dlq:Q"}[rng.Intn(2)]
		fields := []string{"vt", "delay", "maxsize", "totalrecv", "totalsent", "created", "modified", "maxreceives", "deadletter", "rsync", "rscan", "totaldead"}
		for _, id := range ids {
			fields = append(fields, id, id+":rc", id+":fr")
		}
		f := fields[rng.Intn(len(fields))]
		v := garbage[rng.Intn(len(garbage))]
		if rng.Intn(4) == 0 {
			rdb.HDel(ctx, hk, f)
			return fmt.Sprintf("deleted %s %s", hk, f)
		}
		rdb.HSet(ctx, hk, f, v)
		return fmt.Sprintf("set %s %s = %q", hk, f, v)
	default: // odd members and scores in a sorted set
		zk := prefix + []string{"rsmq:q", "rsmq:q:R", "rsmq:dlq"}[rng.Intn(3)]
		members := append([]string{"x", "", strings.Repeat("z", 40), "short:rc"}, ids...)
		m := members[rng.Intn(len(members))]
		score := []float64{0, -1, 1e300, float64(time.Now().UnixMilli()), float64(time.Now().Add(time.Hour).UnixMilli())}[rng.Intn(5)]
		if rng.Intn(4) == 0 {
			rdb.ZRem(ctx, zk, m)
			return fmt.Sprintf("removed %q from %s", m, zk)
		}
		rdb.ZAdd(ctx, zk, redis.Z{Score: score, Member: m})
		return fmt.Sprintf("added %q at %g to %s", m, score, zk)
	}
}

func randomOp(ctx context.Context, rng *rand.Rand, c *delayq.Client, ids []string) (string, error) {
	id := ids[rng.Intn(len(ids))]
	vt := time.Minute
	var err error
	var op string
	switch rng.Intn(19) {
	case 0:
		op = "push"
		_, err = c.Push(ctx, "q", "new", delayq.PushOptions{})
	case 1:
		op = "push to dlq"
		_, err = c.Push(ctx, "dlq", "new", delayq.PushOptions{Delay: time.Second})
	case 2:
		op = "receive 5"
		_, err = c.Receive(ctx, "q", delayq.ReceiveOptions{N: 5})
	case 3:
		op = "receive --pop"
		_, err = c.Receive(ctx, "q", delayq.ReceiveOptions{N: 5, Pop: true})
	case 4:
		op = "ack"
		_, err = c.Ack(ctx, "q", id)
	case 5:
		op = "retry"
		_, err = c.ChangeVisibility(ctx, "q", id, 0)
	case 6:
		op = "stats"
		_, err = c.Stats(ctx, "q")
	case 7:
		op = "attributes"
		_, err = c.Stats(ctx, "q")
	case 8:
		op = "peek"
		_, err = c.Peek(ctx, "q", delayq.PeekOptions{N: 10})
	case 9:
		op = "purge"
		_, err = c.Purge(ctx, "q", -1)
	case 10:
		op = "delete"
		_, err = c.Delete(ctx, "q", -1)
	case 11:
		op = "create"
		err = c.Create(ctx, "new", delayq.Attributes{})
	case 12:
		op = "set"
		err = c.SetAttributes(ctx, "q", delayq.Attributes{VT: vt})
	case 13:
		op = "list"
		_, err = listQueues(ctx, c)
	case 14:
		op = "redrive"
		_, err = c.Redrive(ctx, "dlq", delayq.RedriveOptions{})
	case 15:
		op = "redrive --to"
		_, err = c.Redrive(ctx, "dlq", delayq.RedriveOptions{To: "q", N: 1})
	case 16:
		op = "get"
		_, err = c.Get(ctx, "q", id)
	case 17:
		op = "peek --state"
		_, err = c.Peek(ctx, "q", delayq.PeekOptions{N: 10, State: []string{"ready", "delayed", "inflight"}[rng.Intn(3)], OlderThan: time.Duration(rng.Intn(2)) * time.Millisecond})
	case 18:
		op = "push many"
		_, err = c.PushMany(ctx, "q", []string{"new 1", "new 2", "new 3"}, delayq.PushManyOptions{Due: []delayq.PushOptions{{}, {Delay: time.Second}, {At: time.Now()}}})
	}
	return op, err
}
