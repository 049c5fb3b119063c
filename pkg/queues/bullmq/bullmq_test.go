package bullmq_test

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/bullmq"
	"github.com/redis/go-redis/v9"
)

func TestParseName(t *testing.T) {
	for _, c := range []struct {
		name, prefix, queue, address string
		bad                          bool
	}{
		{name: "mail", prefix: "bull", queue: "mail", address: "bullmq:mail"},
		{name: "myapp:mail", prefix: "myapp", queue: "mail", address: "bullmq:myapp:mail"},
		{name: "{app}:bull:mail", prefix: "{app}:bull", queue: "mail", address: "bullmq:{app}:bull:mail"},
		{name: "bull:mail", prefix: "bull", queue: "mail", address: "bullmq:mail"},
		{name: "", bad: true},
		{name: "myapp:", bad: true},
		{name: ":mail", bad: true},
	} {
		prefix, queue, err := bullmq.ParseName(c.name)
		if c.bad {
			if !errors.Is(err, names.ErrInvalid) {
				t.Errorf("ParseName(%q) = %q, %q, %v; want ErrInvalid", c.name, prefix, queue, err)
			}
			if _, err := bullmq.New(queues.Env{}).Open(c.name); !errors.Is(err, names.ErrInvalid) {
				t.Errorf("Open(%q): %v, want ErrInvalid", c.name, err)
			}
			continue
		}
		if err != nil || prefix != c.prefix || queue != c.queue {
			t.Errorf("ParseName(%q) = %q, %q, %v; want %q, %q", c.name, prefix, queue, err, c.prefix, c.queue)
		}
		q, err := bullmq.New(queues.Env{}).Open(c.name)
		if err != nil || q.Address() != c.address {
			t.Errorf("Open(%q).Address() = %v, %v; want %q", c.name, q, err, c.address)
		}
	}
}

// TestDiscoverAndReadOnly runs on a layout written by hand (the interop
// test has BullMQ write it): discovery under chatq's prefix keeps only
// BullMQ's meta hashes, counts read every state, and a queue whose meta
// names an untested version refuses every write and changes nothing.
func TestDiscoverAndReadOnly(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c, p := b.Client, b.Prefix
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(c.HSet(ctx, p+"bull:mail:meta", "version", "bullmq:5.81.5", "opts.maxLenEvents", "10000").Err())
		must(c.HSet(ctx, p+"myapp:bull:old:meta", "version", "bullmq:4.18.0").Err())
		must(c.HSet(ctx, p+"bull:capped:meta", "opts.maxLenEvents", "10000").Err())
		must(c.HSet(ctx, p+"bull:other:meta", "owner", "someone else").Err())
		must(c.Set(ctx, p+"bull:astring:meta", "x", 0).Err())
		must(c.HSet(ctx, "elsewhere:bull:mail:meta", "version", "bullmq:5.81.5").Err())
		t.Cleanup(func() { c.Del(ctx, "elsewhere:bull:mail:meta") })
		for i, s := range []string{"1", "2", "3"} {
			must(c.HSet(ctx, p+"myapp:bull:old:"+s, "name", "n", "data", `{"i":`+s+`}`, "timestamp", "1700000000000").Err())
			must(c.ZAdd(ctx, p+"myapp:bull:old:failed", redisZ(float64(i), s)).Err())
		}
		must(c.LPush(ctx, p+"myapp:bull:old:wait", "9", "8").Err())
		must(c.HSet(ctx, p+"myapp:bull:old:9", "name", "n", "data", "{}", "timestamp", "1700000000000").Err())

		kind := bullmq.New(queues.Env{RDB: c, Prefix: p})
		found := map[string]bool{}
		for cursor := uint64(0); ; {
			names, next, err := kind.Discover(ctx, cursor, 3)
			must(err)
			for _, n := range names {
				found[n] = true
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		var got []string
		for n := range found {
			got = append(got, n)
		}
		sort.Strings(got)
		if want := []string{"capped", "mail", "myapp:bull:old"}; !slices.Equal(got, want) {
			t.Errorf("discovered %v, want %v", got, want)
		}

		q, err := kind.Open("myapp:bull:old")
		must(err)
		counts, err := q.Counts(ctx)
		must(err)
		if *counts.Dead != 3 || *counts.Ready != 2 || counts.Retry != nil || counts.Version != "bullmq:4.18.0" ||
			!strings.Contains(counts.ReadOnly, "5.81.5") || counts.OldestReady == nil {
			t.Errorf("counts %+v", counts)
		}
		bq := q.(*bullmq.Queue)
		writes := map[string]func() error{
			"retry":   func() error { _, err := bq.Retry(ctx, []string{"1"}); return err },
			"remove":  func() error { _, err := bq.Remove(ctx, []string{"2"}, true); return err },
			"redrive": func() error { _, err := bq.Redrive(ctx, 0); return err },
			"pause":   func() error { return bq.Pause(ctx) },
			"resume":  func() error { return bq.Resume(ctx) },
			"recover": func() error { _, err := bq.Recover(ctx, queues.RecoverOptions{}); return err },
		}
		for name, write := range writes {
			err := write()
			if !errors.Is(err, queues.ErrReadOnly) || !strings.Contains(err.Error(), "6.7.0") {
				t.Errorf("%s on a 4.x queue: %v, want ErrReadOnly naming the tested versions", name, err)
			}
		}
		if n := c.ZCard(ctx, p+"myapp:bull:old:failed").Val(); n != 3 {
			t.Errorf("the read-only queue's failed set has %d jobs, want 3", n)
		}
		if n := c.Exists(ctx, p+"myapp:bull:old:2").Val(); n != 1 {
			t.Error("the read-only queue's job was removed")
		}
		if n := c.HLen(ctx, p+"myapp:bull:old:meta").Val(); n != 1 {
			t.Error("the read-only queue's meta was written")
		}

		missing, err := kind.Open("nothing")
		must(err)
		if _, err := missing.Counts(ctx); !errors.Is(err, queues.ErrQueueNotFound) {
			t.Errorf("counts of a missing queue: %v", err)
		}
		if _, err := missing.(*bullmq.Queue).Retry(ctx, []string{"1"}); !errors.Is(err, queues.ErrQueueNotFound) {
			t.Errorf("retry on a missing queue: %v", err)
		}
	})
}

func redisZ(score float64, member string) redis.Z { return redis.Z{Score: score, Member: member} }
