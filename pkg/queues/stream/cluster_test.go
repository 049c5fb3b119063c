package stream_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/stream"
	"github.com/redis/go-redis/v9"
)

// On a Cluster: discovery goes master by master; a dead-letter stream in
// the stream's slot (a hash tag) takes entries and gives them back; one
// in another slot is refused before anything changes.
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	cl := redistest.StartCluster(t, 3, 0)
	opt, err := redis.ParseClusterURL(cl.URL())
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClusterClient(opt)
	t.Cleanup(func() { rdb.Close() })
	ctx := context.Background()
	const prefix = "c:"
	kind := stream.New(queues.Env{RDB: rdb, Prefix: prefix})

	for _, k := range []string{"a", "b{x}", "{orders}", "orders", "p:{q}:r", "{}", "{x", "x}{y}"} {
		want, err := rdb.ClusterKeySlot(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if got := stream.Slot(k); int64(got) != want {
			t.Errorf("slot(%q) = %d, CLUSTER KEYSLOT %d", k, got, want)
		}
	}

	var want []string
	for i := range 12 {
		key := fmt.Sprintf("s%d", i)
		if err := rdb.XGroupCreateMkStream(ctx, prefix+key, "g", "0").Err(); err != nil {
			t.Fatal(err)
		}
		want = append(want, key+"/g")
	}
	fill := func(key string, n int) {
		for i := range n {
			if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: prefix + key, Values: []string{"n", fmt.Sprint(i)}}).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := rdb.XGroupCreate(ctx, prefix+key, "g", "0").Err(); err != nil {
			t.Fatal(err)
		}
		if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{prefix + key, ">"}, Block: -1}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	fill("orders", 4)
	fill("{jobs}", 4)
	want = append(want, "orders/g", "{jobs}/g")
	var got []string
	masters := map[uint64]bool{}
	for cursor, calls := uint64(0), 0; ; calls++ {
		if calls > 1000 {
			t.Fatal("Discover does not end")
		}
		names, next, err := kind.Discover(ctx, cursor, 2)
		if err != nil {
			t.Fatal(err)
		}
		masters[cursor>>48] = true
		got = append(got, names...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	if got = slices.Compact(sorted(got)); !slices.Equal(got, sorted(want)) {
		t.Errorf("discovered %v, want %v", got, sorted(want))
	}
	if len(masters) != 3 {
		t.Errorf("Discover visited %d masters, want 3", len(masters))
	}

	// Untagged: the default dead-letter stream is in another slot.
	q, _ := kind.OpenQueue("orders/g")
	if stream.Slot(q.Key()) == stream.Slot(q.DeadKey()) {
		t.Fatal("the test wants the keys in two slots")
	}
	if _, err := q.DeadLetter(ctx, queues.DeadLetterOptions{MinAttempts: 1}); !errors.Is(err, names.ErrInvalid) {
		t.Errorf("cross-slot dead-letter: %v, want ErrInvalid", err)
	}
	if c, err := q.Counts(ctx); err != nil || *c.Inflight != 4 || *c.Dead != 0 {
		t.Errorf("counts after the refusal: %+v %v", c, err)
	}

	// Tagged: moved and back, counts read across nodes.
	q, _ = kind.OpenQueue("{jobs}/g")
	res, err := q.DeadLetter(ctx, queues.DeadLetterOptions{MinAttempts: 1})
	if err != nil || len(res.Done) != 4 {
		t.Fatalf("dead-letter: %+v %v", res, err)
	}
	if c, err := q.Counts(ctx); err != nil || *c.Inflight != 0 || *c.Dead != 4 || *c.Ready != 0 {
		t.Errorf("counts: %+v %v", c, err)
	}
	dead := 0
	if err := q.Scan(ctx, queues.ScanOptions{State: queues.Dead}, func(j []queues.Job) error { dead += len(j); return nil }); err != nil || dead != 4 {
		t.Errorf("scan dead: %d %v", dead, err)
	}
	res, err = q.Redrive(ctx, 0)
	if err != nil || len(res.Done) != 4 {
		t.Fatalf("redrive: %+v %v", res, err)
	}
	if c, err := q.Counts(ctx); err != nil || *c.Ready != 4 || *c.Dead != 0 {
		t.Errorf("counts after redrive: %+v %v", c, err)
	}
}
