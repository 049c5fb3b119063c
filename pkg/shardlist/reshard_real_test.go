package shardlist

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// TestExactlyOnceThroughLiveReshard pushes and pops one sharded list as fast
// as two producers and two blocking consumers can, through a go-redis
// ClusterClient with its defaults (as a program using the package has),
// while the list's slot moves from master to master one key at a time,
// round after round; in every third round the master that takes no
// part in the move is frozen for 2.5 s, longer than the node timeout, so
// that the whole cluster answers CLUSTERDOWN for a while, mid-move. A call
// that fails is sent again (TRYAGAIN, CLUSTERDOWN: nothing was done), as
// the commands do. Every item pushed is popped exactly once, and none that
// was not pushed: the process-level TestLiveReshard (package main) moves
// about a hundred items; this one moves thousands.
//
// CHATQ_TEST_RESHARD_ROUNDS=N runs N rounds (default 12).
func TestExactlyOnceThroughLiveReshard(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	// A program's own go-redis client, with its defaults: the package
	// must not depend on chatq's (internal/cli/conn).
	opt, err := redis.ParseClusterURL(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	cl := redis.NewClusterClient(opt)
	defer cl.Close()
	lists := New(cl, Options{ShardSize: 4}) // 3 items a shard: many shard keys
	// Ends the producers and consumers when the test does, a Fatal too.
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rounds := 12
	if s := os.Getenv("CHATQ_TEST_RESHARD_ROUNDS"); s != "" {
		if rounds, err = strconv.Atoi(s); err != nil {
			t.Fatalf("CHATQ_TEST_RESHARD_ROUNDS=%q: %v", s, err)
		}
	}

	var mu sync.Mutex
	sent := map[string]bool{}
	popped := map[string]int{}
	var inDoubt []string // pushes whose reply was lost: stored or not
	var lostPops []error // pops whose reply was lost: their item may be gone
	var retried atomic.Int64
	var backlog []string
	for i := range 60 {
		backlog = append(backlog, "b"+strconv.Itoa(i))
		sent[backlog[i]] = true
	}
	if _, err := lists.RPush(ctx, "items", backlog...); err != nil {
		t.Fatal(err)
	}

	var producing, popping atomic.Bool
	producing.Store(true)
	popping.Store(true)
	var producers, consumers sync.WaitGroup
	for p := range 2 {
		producers.Add(1)
		go func() {
			defer producers.Done()
			for i := 0; producing.Load() && ctx.Err() == nil; i++ {
				id := fmt.Sprintf("p%d-%d", p, i)
				for ctx.Err() == nil {
					_, err := lists.RPush(ctx, "items", id)
					mu.Lock()
					switch {
					case err == nil:
						sent[id] = true
					case conn.ReplyLost(err):
						inDoubt = append(inDoubt, id)
					}
					mu.Unlock()
					if err == nil || conn.ReplyLost(err) {
						break
					}
					retried.Add(1)
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
	}
	for range 2 {
		consumers.Add(1)
		go func() {
			defer consumers.Done()
			for popping.Load() && ctx.Err() == nil {
				item, err := lists.BLPop(ctx, "items", 300*time.Millisecond)
				switch {
				case err == nil:
					mu.Lock()
					popped[item]++
					mu.Unlock()
				case errors.Is(err, ErrEmpty):
				case conn.ReplyLost(err) && !errors.Is(err, ErrWait):
					mu.Lock()
					lostPops = append(lostPops, err)
					mu.Unlock()
				default:
					retried.Add(1)
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
	}

	l, _ := lists.list("items")
	slot, err := c.Slot(ctx, l.keys[0])
	if err != nil {
		t.Fatal(err)
	}
	keysMoved, frozen := 0, 0
	for round := range rounds {
		owner, err := c.Owner(ctx, slot)
		if err != nil {
			t.Fatal(err)
		}
		masters := c.Masters(ctx)
		if len(masters) != 3 {
			t.Fatalf("round %d: %d masters, want 3", round, len(masters))
		}
		i := slices.Index(masters, owner)
		dst := masters[(i+1+round%2)%3]
		third := masters[(i+2-round%2)%3]
		k := 0
		err = c.MigrateSlot(ctx, slot, dst, redistest.MigrateOptions{AfterKey: func() {
			keysMoved++
			if k++; round%3 == 2 && k == 2 {
				third.Freeze(2500 * time.Millisecond)
				frozen++
			}
			time.Sleep(time.Duration(round%4) * 5 * time.Millisecond)
		}})
		if err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, c.DumpSlot(context.Background(), slot))
		}
	}
	producing.Store(false)
	producers.Wait()

	unpopped := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for id := range sent {
			if popped[id] == 0 {
				out = append(out, id)
			}
		}
		slices.Sort(out)
		return out
	}
	deadline := time.Now().Add(time.Minute) // a deadline for a hang, not a budget
	for len(unpopped()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	popping.Store(false)
	consumers.Wait()

	lost := unpopped()
	var dups, strays []string
	for id, n := range popped {
		if n > 1 {
			dups = append(dups, id)
		}
		if !sent[id] && !slices.Contains(inDoubt, id) {
			strays = append(strays, id)
		}
	}
	t.Logf("%d rounds (%d keys moved, a master frozen %d times): %d pushed, %d popped, %d pushes in doubt, %d pops lost, %d calls sent again; the nodes answered %v",
		rounds, keysMoved, frozen, len(sent), len(popped), len(inDoubt), len(lostPops), retried.Load(), c.Redirects(context.Background()))
	for _, err := range lostPops {
		t.Errorf("a pop's reply was lost: %v", err)
	}
	if len(lost) > 0 || len(dups) > 0 || len(strays) > 0 {
		t.Errorf("%d lost %v, duplicated %v, popped but not pushed %v", len(lost), lost[:min(len(lost), 20)], dups, strays)
		t.Logf("slot %d now:\n%s", slot, c.DumpSlot(context.Background(), slot))
	}
}
