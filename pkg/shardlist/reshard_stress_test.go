package shardlist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/internal/redistest"
)

// TestReshardStress: many pushes and blocking pops of one list, through
// chatq's cluster client, while the list's slot moves again and again
// between masters one key at a time. Every item pushed is popped exactly
// once.
func TestReshardStress(t *testing.T) {
	if os.Getenv("CHATQ_TEST_STRESS") == "" {
		t.Skip("CHATQ_TEST_STRESS=1")
	}
	c := redistest.StartCluster(t, 3, 0)
	var errOut bytes.Buffer
	cl, err := conn.NewClient(&conn.Config{URL: c.URL(), Cluster: true, Timeout: 3 * time.Second},
		&iostreams.IOStreams{ErrOut: &errOut}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	lists := New(cl, Options{ShardSize: 4})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()

	var mu sync.Mutex
	sent := map[string]bool{}
	got := map[string]int{}
	var doubt []string
	var errs []error
	note := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if len(errs) < 20 {
			errs = append(errs, err)
		}
	}
	var backlog []string
	for i := range 60 {
		backlog = append(backlog, "b"+strconv.Itoa(i))
		sent["b"+strconv.Itoa(i)] = true
	}
	if _, err := lists.RPush(ctx, "items", backlog...); err != nil {
		t.Fatal(err)
	}
	var producing, popping atomic.Bool
	producing.Store(true)
	popping.Store(true)
	var wg, pw sync.WaitGroup
	var retries atomic.Int64
	for p := range 2 {
		pw.Add(1)
		go func() {
			defer pw.Done()
			for i := 0; producing.Load(); i++ {
				id := fmt.Sprintf("p%d-%d", p, i)
				for {
					_, err := lists.RPush(ctx, "items", id)
					if err == nil {
						mu.Lock()
						sent[id] = true
						mu.Unlock()
						break
					}
					if conn.ReplyLost(err) {
						mu.Lock()
						doubt = append(doubt, id)
						mu.Unlock()
						note(err)
						break
					}
					retries.Add(1)
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
	}
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for popping.Load() {
				item, err := lists.BLPop(ctx, "items", 300*time.Millisecond)
				switch {
				case err == nil:
					mu.Lock()
					got[item]++
					mu.Unlock()
				case errors.Is(err, ErrEmpty):
				case conn.ReplyLost(err) && !errors.Is(err, ErrWait):
					note(err)
				default:
					retries.Add(1)
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
	rounds := 30
	if s := os.Getenv("CHATQ_TEST_STRESS_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	moved, freezes := 0, 0
	freeze := os.Getenv("CHATQ_TEST_STRESS_FREEZE") == "1"
	for round := range rounds {
		owner, err := c.Owner(ctx, slot)
		if err != nil {
			t.Fatal(err)
		}
		masters := c.Masters(ctx)
		var dst *redistest.Server
		for i, m := range masters {
			if m == owner {
				dst = masters[(i+1+round%2)%len(masters)]
			}
		}
		var third *redistest.Server
		for _, m := range masters {
			if m != owner && m != dst {
				third = m
			}
		}
		k := 0
		if err := c.MigrateSlot(ctx, slot, dst, redistest.MigrateOptions{AfterKey: func() {
			moved++
			k++
			if freeze && round%3 == 0 && k == 2 {
				third.Freeze(2500 * time.Millisecond)
				freezes++
			}
			time.Sleep(time.Duration(round%4) * 5 * time.Millisecond)
		}}); err != nil {
			t.Fatalf("round %d: %v\n%s", round, err, c.DumpSlot(context.Background(), slot))
		}
	}
	producing.Store(false)
	pw.Wait()
	lost := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for id := range sent {
			if got[id] == 0 {
				out = append(out, id)
			}
		}
		return out
	}
	deadline := time.Now().Add(time.Minute)
	for len(lost()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	popping.Store(false)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	var dups, strays []string
	for id, n := range got {
		if n > 1 {
			dups = append(dups, id)
		}
		if !sent[id] && !slicesContains(doubt, id) {
			strays = append(strays, id)
		}
	}
	t.Logf("%d freezes", freezes)
	t.Logf("%d rounds, %d keys moved, %d sent, %d popped, %d in doubt, %d retries; nodes answered %v",
		rounds, moved, len(sent), len(got), len(doubt), retries.Load(), c.Redirects(context.Background()))
	for _, e := range errs {
		t.Logf("error: %v", e)
	}
	mu.Unlock()
	ls := lost()
	mu.Lock()
	if len(ls) > 0 || len(dups) > 0 || len(strays) > 0 {
		t.Errorf("lost %d %v, duplicated %v, not sent %v", len(ls), ls[:min(len(ls), 20)], dups, strays)
		t.Logf("slot %d:\n%s", slot, c.DumpSlot(context.Background(), slot))
	}
}

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
