package shardlist

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// While a list's slot moves to another Cluster node one key at a time, its
// node refuses a script any shard key it no longer holds. The list's five
// keys are declared, so Redis redirects the whole call when one of them has
// moved; shard keys are not. A script that meets such a shard must answer
// TRYAGAIN having changed nothing, so that sending it again is safe: a push
// that fills its end shard and must open one more (the fresh shard is
// checked before the first write), and a pop of a shard that has moved.
func TestMovingShardIsRefusedBeforeAnyWrite(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	ctx := context.Background()
	var addrs []string
	for _, s := range c.Nodes {
		addrs = append(addrs, s.Addr())
	}
	// No redirects and no retries: the test sees each refusal.
	rdb := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, MaxRedirects: -1})
	defer rdb.Close()
	lists := New(rdb, Options{ShardSize: 3}) // two items a shard
	// Shards 0 [1 2], 1 [3 4], 2 [5], then -1 [x]: first, last, mid, size
	// and ver all exist, so scripts run on the node that holds them.
	if _, err := lists.RPush(ctx, "L", "1", "2", "3", "4", "5"); err != nil {
		t.Fatal(err)
	}
	if _, err := lists.LPush(ctx, "L", "x"); err != nil {
		t.Fatal(err)
	}
	want := []string{"x", "1", "2", "3", "4", "5"}
	l, _ := lists.list("L")
	slot, err := c.Slot(ctx, l.keys[0])
	if err != nil {
		t.Fatal(err)
	}
	src, err := c.Owner(ctx, slot)
	if err != nil {
		t.Fatal(err)
	}
	var dst *redistest.Server
	for _, m := range c.Masters(ctx) {
		if m != src {
			dst = m
		}
	}
	srcID, _ := src.NodeID(ctx)
	dstID, _ := dst.NodeID(ctx)
	sc, dc := src.Client(), dst.Client()
	keysOnSource := func() map[string]string {
		out := map[string]string{}
		keys, err := sc.ClusterGetKeysInSlot(ctx, slot, 100).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			out[k] = strings.Join(sc.LRange(ctx, k, 0, -1).Val(), ",") + sc.Get(ctx, k).Val()
		}
		return out
	}
	// The slot starts to move: the source still holds every key.
	if err := dc.Do(ctx, "cluster", "setslot", slot, "importing", srcID).Err(); err != nil {
		t.Fatal(err)
	}
	if err := sc.Do(ctx, "cluster", "setslot", slot, "migrating", dstID).Err(); err != nil {
		t.Fatal(err)
	}
	before := keysOnSource()
	// "y" fits in shard 2, "z" needs shard 3, which the source does not
	// hold (absent, in a moving slot): refused before "y" is pushed.
	if _, err := lists.RPush(ctx, "L", "y", "z"); err == nil || !strings.HasPrefix(err.Error(), "TRYAGAIN") && !strings.Contains(err.Error(), ": TRYAGAIN ") {
		t.Errorf("a push that opens a moving shard: %v, want TRYAGAIN", err)
	}
	if after := keysOnSource(); !maps.Equal(before, after) {
		t.Errorf("the refused push changed the list:\nbefore %v\nafter  %v", before, after)
	}
	// Shard 2 moves: a pop from that end meets it.
	if err := sc.Do(ctx, "migrate", "127.0.0.1", dst.Port, l.shardKey(2), 0, 5000).Err(); err != nil {
		t.Fatal(err)
	}
	before = keysOnSource()
	if _, err := lists.RPop(ctx, "L", 1); err == nil || !strings.Contains(err.Error(), "TRYAGAIN") {
		t.Errorf("a pop of a moved shard: %v, want TRYAGAIN", err)
	}
	if after := keysOnSource(); !maps.Equal(before, after) {
		t.Errorf("the refused pop changed the list:\nbefore %v\nafter  %v", before, after)
	}
	// The move ends: the list is whole, on the other node.
	if err := c.MigrateSlot(ctx, slot, dst, redistest.MigrateOptions{}); err != nil {
		t.Fatal(err)
	}
	follows := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer follows.Close()
	got, err := New(follows, Options{}).LRange(ctx, "L", 0, -1)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("after the move: %v %v, want %v", got, err, want)
	}
}
