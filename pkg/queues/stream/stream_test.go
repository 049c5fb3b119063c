package stream_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/stream"
	"github.com/redis/go-redis/v9"
)

// Every KEY/GROUP name round-trips, whatever '/' and '%' the key and the
// group hold; a '%' the encoding did not write is refused.
func TestNameRoundTrip(t *testing.T) {
	k := stream.New(queues.Env{Prefix: "p:"})
	for _, c := range []struct{ key, group, name string }{
		{"orders", "billing", "orders/billing"},
		{"a/b", "c", "a/b/c"},
		{"orders", "team/eu", "orders/team%2Feu"},
		{"orders", "100%", "orders/100%25"},
		{"orders", "%2F", "orders/%252F"},
		{"x%y/z", "/%/", "x%y/z/%2F%25%2F"},
		{"orders", "", "orders/"},
		{"", "g", "/g"},
		{"o:{tag}:1", "g:1", "o:{tag}:1/g:1"},
	} {
		if got := stream.Name(c.key, c.group); got != c.name {
			t.Errorf("Name(%q, %q) = %q, want %q", c.key, c.group, got, c.name)
		}
		key, group, err := stream.ParseName(c.name)
		if err != nil || key != c.key || group != c.group {
			t.Errorf("ParseName(%q) = %q, %q, %v; want %q, %q", c.name, key, group, err, c.key, c.group)
		}
		q, err := k.OpenQueue(c.name)
		if err != nil {
			t.Fatal(err)
		}
		if q.Address() != "stream:"+c.name || q.Key() != "p:"+c.key || q.Group() != c.group {
			t.Errorf("Open(%q): address %q, key %q, group %q", c.name, q.Address(), q.Key(), q.Group())
		}
		if kind, name := queues.Parse(q.Address()); kind != "stream" || name != c.name {
			t.Errorf("queues.Parse(%q) = %q, %q", q.Address(), kind, name)
		}
	}
	// %2f is read as %2F; Address writes it back canonically.
	if q, err := k.OpenQueue("s/a%2fb"); err != nil || q.Group() != "a/b" || q.Address() != "stream:s/a%2Fb" {
		t.Errorf("s/a%%2fb: %v", err)
	}
	for _, bad := range []string{"nogroup", "s/a%", "s/a%2", "s/a%41", "s/%%"} {
		if _, err := k.Open(bad); !errors.Is(err, names.ErrInvalid) {
			t.Errorf("Open(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

// Discover pages through the streams under the prefix and names each of
// their groups; a stream without groups, another type's key and a stream
// outside the prefix are no queues. Every name it gives opens the queue.
func TestDiscover(t *testing.T) {
	f := newFixture(t)
	want := []string{}
	for i := range 12 {
		key := fmt.Sprintf("s%d", i)
		f.fill(key, 1)
		if i%4 == 3 {
			continue // no group
		}
		for _, g := range []string{"g", "team/eu", "50%"} {
			f.group(key, g)
			want = append(want, stream.Name(key, g))
		}
	}
	f.fill("a/b", 1)
	f.group("a/b", "x/y")
	want = append(want, "a/b/x%2Fy")
	if err := f.rdb.Set(f.ctx, f.prefix+"notastream", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := f.rdb.XGroupCreateMkStream(f.ctx, "other:s", "g", "0").Err(); err != nil {
		t.Fatal(err)
	}
	var got []string
	var cursor uint64
	for calls := 0; ; calls++ {
		if calls > 100 {
			t.Fatal("Discover does not end")
		}
		names, next, err := f.kind.Discover(f.ctx, cursor, 3)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, names...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	got = slices.Compact(sorted(got))
	if !slices.Equal(got, sorted(want)) {
		t.Fatalf("discovered %d names %v\nwant %d %v", len(got), got, len(want), sorted(want))
	}
	for _, name := range got {
		q, err := f.kind.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := q.Counts(f.ctx)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if *c.Ready != 1 || *c.Inflight != 0 {
			t.Errorf("%s: ready %v inflight %v, want 1 and 0", name, n(c.Ready), n(c.Inflight))
		}
	}
	// A missing group or stream is ErrQueueNotFound.
	for _, name := range []string{"s0/nope", "nostream/g", "notastream/g"} {
		q, _ := f.kind.Open(name)
		if _, err := q.Counts(f.ctx); !errors.Is(err, queues.ErrQueueNotFound) {
			t.Errorf("Counts of %s: %v, want ErrQueueNotFound", name, err)
		}
	}
}

// Counts equal what the server says: ready is XINFO GROUPS' lag, inflight
// XPENDING's count, for two groups on one stream read by real consumers;
// the states a group lacks are nil.
func TestCountsMatchServer(t *testing.T) {
	f := newFixture(t)
	ids := f.fill("orders", 50)
	f.group("orders", "billing")
	f.group("orders", "audit")
	var acked int
	for i, c := range []string{"c1", "c2", "c3"} {
		msgs := f.read("orders", "billing", c, int64(5+2*i)) // 5, 7, 9
		if len(msgs) != 5+2*i {
			t.Fatalf("%s read %d", c, len(msgs))
		}
		f.ack("orders", "billing", msgs[:i]) // 0, 1, 2 acked
		acked += i
	}
	f.read("orders", "audit", "a1", 4)
	for _, g := range []string{"billing", "audit"} {
		q := f.open("orders", g)
		c := f.counts(q)
		info := f.info("orders", g)
		if *c.Ready != info.Lag || *c.Inflight != f.pending("orders", g) || *c.Inflight != info.Pending {
			t.Errorf("%s: ready %d inflight %d; XINFO GROUPS lag %d pending %d, XPENDING %d",
				g, *c.Ready, *c.Inflight, info.Lag, info.Pending, f.pending("orders", g))
		}
		if c.Delayed != nil || c.Retry != nil || c.Done != nil || c.Paused != nil || *c.Dead != 0 {
			t.Errorf("%s: delayed %v retry %v done %v paused %v dead %v", g, n(c.Delayed), n(c.Retry), n(c.Done), c.Paused, n(c.Dead))
		}
		if c.ReadOnly != "" {
			t.Errorf("%s: read-only on Redis 7: %s", g, c.ReadOnly)
		}
		if c.OldestReady == nil || *c.OldestReady < 0 || *c.OldestReady > time.Minute {
			t.Errorf("%s: oldest ready %v", g, c.OldestReady)
		}
	}
	if c := f.counts(f.open("orders", "billing")); *c.Ready != 50-21 || *c.Inflight != 21-int64(acked) {
		t.Errorf("billing: ready %d inflight %d, want 29 and %d", *c.Ready, *c.Inflight, 21-acked)
	}
	// Oldest ready is the age of the first entry after the last-delivered
	// id: 22nd of billing's, computed from its id against the server's TIME.
	now, _ := f.rdb.Time(f.ctx).Result()
	ms, _, _ := strings.Cut(ids[21], "-")
	var idms int64
	fmt.Sscan(ms, &idms)
	age := now.Sub(time.UnixMilli(idms))
	if c := f.counts(f.open("orders", "billing")); *c.OldestReady > age+time.Second || *c.OldestReady < age-time.Second {
		t.Errorf("oldest ready %v, want about %v", *c.OldestReady, age)
	}

	// All read: ready 0, no oldest.
	f.read("orders", "audit", "a1", 100)
	if c := f.counts(f.open("orders", "audit")); *c.Ready != 0 || *c.Inflight != 50 || c.OldestReady != nil {
		t.Errorf("audit read all: ready %v inflight %v oldest %v", n(c.Ready), n(c.Inflight), c.OldestReady)
	}
}

// Where the server has no lag (an entry after the last-delivered id was
// deleted), ready is counted in bounded reads, exactly while few.
func TestCountsWithoutLag(t *testing.T) {
	f := newFixture(t)
	ids := f.fill("s", 10)
	f.group("s", "g")
	f.read("s", "g", "c", 3)
	if n, err := f.rdb.XDel(f.ctx, f.prefix+"s", ids[5]).Result(); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	if info := f.info("s", "g"); info.Lag != -1 {
		t.Fatalf("the server still has a lag: %d", info.Lag)
	}
	c := f.counts(f.open("s", "g"))
	if c.Ready == nil || *c.Ready != 6 {
		t.Errorf("ready %v, want 6 (entries 4-10 but the 6th)", n(c.Ready))
	}
	// More than 100 after it: unknown, not a guess.
	f.fill("s", 120)
	if c := f.counts(f.open("s", "g")); c.Ready != nil {
		t.Errorf("ready %d, want nil (more than 100 entries after the last-delivered id, no lag)", *c.Ready)
	}
}

// Scan passes ready entries (field order kept), pending entries with
// their consumer, idle time and delivery count, and filters by grep,
// delivery count and idle time; Get tells every state.
func TestScanAndGet(t *testing.T) {
	f := newFixture(t)
	key := f.prefix + "s"
	var ids []string
	for i := range 30 {
		id, err := f.rdb.XAdd(f.ctx, &redis.XAddArgs{Stream: key, Values: []string{"zeta", fmt.Sprint(i), "alpha", fmt.Sprintf("v\"%d", i)}}).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	f.group("s", "g")
	done := f.read("s", "g", "c1", 5)
	f.ack("s", "g", done)
	held := f.read("s", "g", "c2", 10) // entries 5-14 pending to c2
	f.readFrom("s", "g", "c2", 2, "0") // entries 5 and 6 delivered twice
	q := f.open("s", "g")

	ready := f.scan(q, queues.ScanOptions{State: queues.Ready, Page: 4})
	if !slices.Equal(jobIDs(ready), ids[15:]) {
		t.Fatalf("ready %v, want %v", jobIDs(ready), ids[15:])
	}
	if j := ready[0]; j.Data != `{"zeta":"15","alpha":"v\"15"}` || j.Attempts != 0 || j.State != queues.Ready || j.Created.IsZero() {
		t.Errorf("ready job %+v", j)
	}
	var obj map[string]string
	if err := json.Unmarshal([]byte(ready[3].Data), &obj); err != nil || obj["alpha"] != `v"18` {
		t.Errorf("data %s: %v", ready[3].Data, err)
	}

	inflight := f.scan(q, queues.ScanOptions{State: queues.Inflight, Page: 3})
	if !slices.Equal(jobIDs(inflight), msgIDs(held)) {
		t.Fatalf("inflight %v, want %v", jobIDs(inflight), msgIDs(held))
	}
	for i, j := range inflight {
		want := int64(1)
		if i < 2 {
			want = 2
		}
		if j.Started.Before(j.Created) || j.Started.After(j.Created.Add(time.Minute)) {
			t.Errorf("inflight %s: started %v, created %v", j.ID, j.Started, j.Created)
		}
		if j.Consumer != "c2" || j.Attempts != want || j.KindState != "pending" || j.State != queues.Inflight {
			t.Errorf("inflight %s: consumer %q attempts %d, want c2 and %d", j.ID, j.Consumer, j.Attempts, want)
		}
	}
	if got := f.scan(q, queues.ScanOptions{MinAttempts: 2}); !slices.Equal(jobIDs(got), ids[5:7]) {
		t.Errorf("min attempts 2: %v, want %v", jobIDs(got), ids[5:7])
	}
	if got := f.scan(q, queues.ScanOptions{Grep: `v"2`}); !slices.Equal(jobIDs(got), ids[20:30]) {
		t.Errorf("grep: %v, want %v", jobIDs(got), ids[20:30])
	}
	if got := f.scan(q, queues.ScanOptions{Grep: ids[7]}); !slices.Equal(jobIDs(got), ids[7:8]) {
		t.Errorf("grep id: %v", jobIDs(got))
	}
	if got := f.scan(q, queues.ScanOptions{Max: 17, Page: 5}); !slices.Equal(jobIDs(got), append(slices.Clone(ids[15:30]), ids[5:7]...)) {
		t.Errorf("max 17: %v", jobIDs(got))
	}
	// Idle for an hour: none; then, once entries have been idle 30ms,
	// those (a history read would reset them).
	if got := f.scan(q, queues.ScanOptions{InflightFor: time.Hour}); len(got) != 0 {
		t.Errorf("inflight for an hour: %v", jobIDs(got))
	}
	eventually(t, "entries idle 30ms", func() bool {
		return len(f.scan(q, queues.ScanOptions{InflightFor: 30 * time.Millisecond})) == 10
	})
	if got := f.scan(q, queues.ScanOptions{InflightFor: 30 * time.Millisecond}); got[0].Idle < 30*time.Millisecond {
		t.Errorf("idle %v", got[0].Idle)
	}
	// An entry deleted while pending has no data, and says why.
	if err := f.rdb.XDel(f.ctx, key, ids[9]).Err(); err != nil {
		t.Fatal(err)
	}
	gone := f.scan(q, queues.ScanOptions{State: queues.Inflight, Grep: ids[9]})
	if len(gone) != 1 || gone[0].Data != "" || gone[0].Extra["deleted"] == nil {
		t.Errorf("deleted while pending: %+v", gone)
	}
	if err := q.Scan(f.ctx, queues.ScanOptions{State: queues.Delayed}, func([]queues.Job) error { return nil }); !errors.Is(err, names.ErrInvalid) {
		t.Errorf("delayed: %v, want ErrInvalid", err)
	}
	// A callback's ErrStop ends the scan quietly after one page.
	pages := 0
	if err := q.Scan(f.ctx, queues.ScanOptions{Page: 2}, func([]queues.Job) error { pages++; return queues.ErrStop }); err != nil || pages != 1 {
		t.Errorf("ErrStop: %v after %d pages", err, pages)
	}

	for _, c := range []struct {
		id, state, kind string
	}{
		{ids[0], queues.Done, "acked"},
		{ids[6], queues.Inflight, "pending"},
		{ids[29], queues.Ready, ""},
	} {
		j, err := q.Get(f.ctx, c.id)
		if err != nil || j.State != c.state || j.KindState != c.kind || j.ID != c.id || !strings.Contains(j.Data, `"zeta"`) {
			t.Errorf("Get %s: %+v, %v; want %s/%s", c.id, j, err, c.state, c.kind)
		}
	}
	if j, err := q.Get(f.ctx, ids[6]); err != nil || j.Consumer != "c2" || j.Attempts != 2 {
		t.Errorf("Get pending: %+v %v", j, err)
	}
	if j, err := q.Get(f.ctx, ids[9]); err != nil || j.State != queues.Inflight || j.Data != "" {
		t.Errorf("Get deleted pending: %+v %v", j, err)
	}
	if _, err := q.Get(f.ctx, "1-1"); !errors.Is(err, queues.ErrJobNotFound) {
		t.Errorf("Get unknown: %v", err)
	}
	if _, err := q.Get(f.ctx, "12"); !errors.Is(err, names.ErrInvalid) {
		t.Errorf("Get 12: %v", err)
	}
}

// Stuck entries are claimed for a named consumer once idle long enough
// (not before), and that consumer reads them from its history and acks
// them: each exactly once.
func TestClaim(t *testing.T) {
	f := newFixture(t)
	ids := f.fill("s", 30)
	f.group("s", "g")
	stuck := f.read("s", "g", "gone", 20) // a consumer that died holding 20
	q := f.open("s", "g")

	if _, err := q.Recover(f.ctx, queues.RecoverOptions{IdleFor: time.Second}); !errors.Is(err, names.ErrInvalid) {
		t.Errorf("no consumer: %v", err)
	}
	if _, err := q.Recover(f.ctx, queues.RecoverOptions{Consumer: "x"}); !errors.Is(err, names.ErrInvalid) {
		t.Errorf("no idle time: %v", err)
	}
	res, err := q.Recover(f.ctx, queues.RecoverOptions{Consumer: "rescuer", IdleFor: time.Hour})
	if err != nil || len(res.Done) != 0 {
		t.Fatalf("idle for an hour: %+v %v", res, err)
	}
	eventually(t, "20 entries idle 30ms", func() bool {
		p, err := f.rdb.XPendingExt(f.ctx, &redis.XPendingExtArgs{Stream: f.prefix + "s", Group: "g", Idle: 30 * time.Millisecond, Start: "-", End: "+", Count: 100}).Result()
		return err == nil && len(p) == 20
	})
	// By id: two of them, one not pending.
	res, err = q.Recover(f.ctx, queues.RecoverOptions{Consumer: "rescuer", IdleFor: 30 * time.Millisecond, IDs: []string{ids[0], ids[1], ids[25]}})
	if err != nil || !slices.Equal(res.Done, ids[:2]) || res.Skipped[ids[25]] == "" {
		t.Fatalf("claim by id: %+v %v", res, err)
	}
	// At most 7, then the others. (The two just claimed may be idle 30ms
	// again by then on a slow machine, and claimed again: no harm.)
	claimed := slices.Clone(res.Done)
	res, err = q.Recover(f.ctx, queues.RecoverOptions{Consumer: "rescuer", IdleFor: 30 * time.Millisecond, Max: 7})
	if err != nil || len(res.Done) != 7 {
		t.Fatalf("claim max 7: %+v %v", res, err)
	}
	claimed = append(claimed, res.Done...)
	res, err = q.Recover(f.ctx, queues.RecoverOptions{Consumer: "rescuer", IdleFor: 30 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if claimed = slices.Compact(sortedIDs(append(claimed, res.Done...))); !slices.Equal(claimed, ids[:20]) {
		t.Fatalf("claimed %v, want %v", claimed, ids[:20])
	}
	for _, m := range stuck {
		p := f.pendingOf("s", "g", m.ID)
		if p == nil || p.Consumer != "rescuer" || p.RetryCount != 1 {
			t.Fatalf("%s after the claim: %+v (want rescuer's, delivered once)", m.ID, p)
		}
	}
	// The rescuer processes its history: the 20 entries, once each.
	seen := map[string]int{}
	for {
		msgs := f.readFrom("s", "g", "rescuer", 6, "0")
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			seen[m.Values["n"].(string)]++
		}
		f.ack("s", "g", msgs)
	}
	if len(seen) != 20 {
		t.Errorf("rescuer processed %d entries, want 20", len(seen))
	}
	for n, c := range seen {
		if c != 1 {
			t.Errorf("entry n=%s processed %d times", n, c)
		}
	}
	if c := f.counts(q); *c.Inflight != 0 || *c.Ready != 10 {
		t.Errorf("after: ready %d inflight %d", *c.Ready, *c.Inflight)
	}

	// An entry deleted while pending is not claimed: XAUTOCLAIM takes it
	// out of the PEL, and Skipped says so.
	more := f.read("s", "g", "gone", 2)
	if err := f.rdb.XDel(f.ctx, f.prefix+"s", more[0].ID).Err(); err != nil {
		t.Fatal(err)
	}
	res, err = q.Recover(f.ctx, queues.RecoverOptions{Consumer: "rescuer", IdleFor: time.Millisecond})
	if err != nil || !slices.Equal(res.Done, []string{more[1].ID}) || !strings.Contains(res.Skipped[more[0].ID], "deleted") {
		t.Errorf("claim with a deleted entry: %+v %v", res, err)
	}
	if f.pendingOf("s", "g", more[0].ID) != nil {
		t.Errorf("the deleted entry is still pending")
	}
}

// Remove acks and deletes; it leaves an in-flight entry, or one another
// group still needs, unless forced.
func TestRemove(t *testing.T) {
	f := newFixture(t)
	ids := f.fill("s", 10)
	f.group("s", "g")
	f.group("s", "other")
	f.read("s", "g", "c", 4)     // 0-3 pending in g
	f.read("s", "other", "o", 6) // 0-5 pending in other
	f.ack("s", "other", []redis.XMessage{{ID: ids[0]}, {ID: ids[1]}})
	q := f.open("s", "g")

	res, err := q.Remove(f.ctx, []string{ids[0], ids[2], ids[7], "1-1"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Done) != 0 || !strings.Contains(res.Skipped[ids[0]], "in flight") || !strings.Contains(res.Skipped[ids[7]], "other (ready)") || res.Skipped["1-1"] != "not found" {
		t.Fatalf("remove unforced: %+v", res)
	}
	// ids[0]: acked by g here, and by other: removed. ids[4]: ready in g,
	// pending in other: left. ids[8]: ready in both: left.
	f.ack("s", "g", []redis.XMessage{{ID: ids[0]}})
	res, err = q.Remove(f.ctx, []string{ids[0], ids[4], ids[8]}, false)
	if err != nil || !slices.Equal(res.Done, ids[:1]) || !strings.Contains(res.Skipped[ids[4]], "other (inflight)") {
		t.Fatalf("remove: %+v %v", res, err)
	}
	if n, _ := f.rdb.XLen(f.ctx, f.prefix+"s").Result(); n != 9 {
		t.Errorf("stream length %d, want 9", n)
	}
	// Forced: the in-flight entry is acked and deleted.
	res, err = q.Remove(f.ctx, []string{ids[2], ids[7], ids[2]}, true) // an id twice: once
	if err != nil || !slices.Equal(res.Done, []string{ids[2], ids[7]}) || len(res.Skipped) != 0 {
		t.Fatalf("remove forced: %+v %v", res, err)
	}
	if f.pendingOf("s", "g", ids[2]) != nil {
		t.Error("forced removal left the entry pending")
	}
	if c := f.counts(q); *c.Inflight != 2 {
		t.Errorf("inflight %d, want 2", *c.Inflight)
	}
	if _, err := q.Remove(f.ctx, []string{"x"}, false); !errors.Is(err, names.ErrInvalid) {
		t.Errorf("bad id: %v", err)
	}
}

// Entries delivered N times go to the dead-letter stream with their
// origin, acked in the group but kept in the stream for other groups;
// redriven, they come back as new entries that a consumer processes:
// every entry processed exactly once, none lost.
func TestDeadLetterAndRedrive(t *testing.T) {
	f := newFixture(t)
	const total = 20
	key := f.prefix + "s"
	var all []string
	for i := range total {
		values := []string{"n", fmt.Sprint(i)}
		if i == 3 {
			values = append(values, "_origin_id", "mine") // a field named like a marker stays the entry's
		}
		id, err := f.rdb.XAdd(f.ctx, &redis.XAddArgs{Stream: key, Values: values}).Result()
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, id)
	}
	f.group("s", "g")
	f.group("s", "audit")
	for range total {
		f.read("s", "g", "worker", 1)
	}
	// Five poison entries are delivered twice more (a consumer's claim).
	poison := []string{all[1], all[3], all[8], all[13], all[19]}
	for range 2 {
		if err := f.rdb.XClaim(f.ctx, &redis.XClaimArgs{Stream: key, Group: "g", Consumer: "worker", Messages: poison}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	q := f.open("s", "g")
	if _, err := q.DeadLetter(f.ctx, queues.DeadLetterOptions{}); !errors.Is(err, names.ErrInvalid) {
		t.Errorf("no count: %v", err)
	}
	if _, err := q.DeadLetter(f.ctx, queues.DeadLetterOptions{MinAttempts: 3, To: "s"}); !errors.Is(err, names.ErrInvalid) {
		t.Errorf("to itself: %v", err)
	}
	res, err := q.DeadLetter(f.ctx, queues.DeadLetterOptions{MinAttempts: 3, Max: 2})
	if err != nil || !slices.Equal(res.Done, poison[:2]) {
		t.Fatalf("dead-letter max 2: %+v %v", res, err)
	}
	res, err = q.DeadLetter(f.ctx, queues.DeadLetterOptions{MinAttempts: 3})
	if err != nil || !slices.Equal(res.Done, poison[2:]) {
		t.Fatalf("dead-letter: %+v %v", res, err)
	}
	c := f.counts(q)
	if *c.Dead != 5 || *c.Inflight != total-5 || f.pending("s", "g") != total-5 {
		t.Errorf("after: dead %d inflight %d", *c.Dead, *c.Inflight)
	}
	if n, _ := f.rdb.XLen(f.ctx, key).Result(); n != total {
		t.Errorf("stream length %d: dead-lettering deleted entries", n)
	}
	if info := f.info("s", "audit"); info.Lag != total {
		t.Errorf("the other group's lag %d, want %d", info.Lag, total)
	}
	// The dead-letter stream: markers, then the entry's own fields.
	raw, err := f.rdb.Do(f.ctx, "XRANGE", q.DeadKey(), "-", "+").Slice()
	if err != nil || len(raw) != 5 {
		t.Fatalf("dead-letter stream: %v %v", raw, err)
	}
	first := raw[1].([]any)[1].([]any)
	wantHead := []any{"_origin_stream", key, "_origin_group", "g", "_origin_id", all[3], "_origin_consumer", "worker", "_deliveries", "3"}
	if !slices.Equal(first[:10], wantHead) || first[10] != "_dead_at" || !slices.Equal(first[12:], []any{"n", "3", "_origin_id", "mine"}) {
		t.Errorf("dead entry fields %v", first)
	}
	dead := f.scan(q, queues.ScanOptions{State: queues.Dead, Page: 2})
	if len(dead) != 5 || dead[1].Data != `{"n":"3","_origin_id":"mine"}` || dead[1].Attempts != 3 || dead[1].Extra["origin_id"] != all[3] ||
		dead[1].Consumer != "worker" || dead[1].Finished.IsZero() {
		t.Fatalf("dead jobs %+v", dead)
	}
	if j, err := q.Get(f.ctx, dead[0].ID); err != nil || j.State != queues.Dead || j.Extra["origin_id"] != all[1] {
		t.Errorf("Get dead: %+v %v", j, err)
	}

	// The worker finishes the other 15.
	processed := map[string]int{}
	for {
		msgs := f.readFrom("s", "g", "worker", 4, "0")
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			processed[m.Values["n"].(string)]++
		}
		f.ack("s", "g", msgs)
	}
	if len(processed) != total-5 {
		t.Fatalf("worker processed %d, want %d", len(processed), total-5)
	}

	res, err = q.Redrive(f.ctx, 2)
	if err != nil || len(res.Done) != 2 {
		t.Fatalf("redrive 2: %+v %v", res, err)
	}
	res, err = q.Redrive(f.ctx, 0)
	if err != nil || len(res.Done) != 3 {
		t.Fatalf("redrive: %+v %v", res, err)
	}
	if c := f.counts(q); *c.Dead != 0 || *c.Ready != 5 || *c.Inflight != 0 {
		t.Errorf("after redrive: dead %d ready %d inflight %d", *c.Dead, *c.Ready, *c.Inflight)
	}
	// The worker gets them as new entries, fields as they were.
	for {
		msgs := f.read("s", "g", "worker", 3)
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			processed[m.Values["n"].(string)]++
			if m.Values["n"] == "3" && (m.Values["_origin_id"] != "mine" || len(m.Values) != 2) {
				t.Errorf("redriven entry 3: %v", m.Values)
			}
		}
		f.ack("s", "g", msgs)
	}
	if len(processed) != total {
		t.Errorf("processed %d distinct entries, want %d", len(processed), total)
	}
	for n, c := range processed {
		if c != 1 {
			t.Errorf("entry n=%s processed %d times", n, c)
		}
	}
	// The cost of a redrive: the other group sees the copies too.
	if info := f.info("s", "audit"); info.Lag != total+5 {
		t.Errorf("audit's lag %d, want %d", info.Lag, total+5)
	}

	// Elsewhere: To; and an entry there from another origin is left.
	f.read("s", "g", "worker", 0)
	more := f.fill("s", 1)
	f.read("s", "g", "w2", 1)
	res, err = q.DeadLetter(f.ctx, queues.DeadLetterOptions{MinAttempts: 1, To: "elsewhere"})
	if err != nil || !slices.Equal(res.Done, more) {
		t.Fatalf("dead-letter to elsewhere: %+v %v", res, err)
	}
	if n, _ := f.rdb.XLen(f.ctx, f.prefix+"elsewhere").Result(); n != 1 {
		t.Errorf("elsewhere holds %d", n)
	}
	other := f.open("s", "audit")
	if err := f.rdb.Rename(f.ctx, f.prefix+"elsewhere", other.DeadKey()).Err(); err != nil {
		t.Fatal(err)
	}
	res, err = other.Redrive(f.ctx, 0)
	if err != nil || len(res.Done) != 0 || len(res.Skipped) != 1 {
		t.Errorf("redrive of another group's entry: %+v %v", res, err)
	}
}

// A stream key under the prefix that is no stream, or a dead-letter key
// of another type, makes writes fail and change nothing.
func TestDeadLetterWrongType(t *testing.T) {
	f := newFixture(t)
	f.fill("s", 3)
	f.group("s", "g")
	f.read("s", "g", "c", 3)
	q := f.open("s", "g")
	if err := f.rdb.Set(f.ctx, q.DeadKey(), "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := q.DeadLetter(f.ctx, queues.DeadLetterOptions{MinAttempts: 1}); !errors.Is(err, names.ErrInvalid) {
		t.Errorf("dead-letter key a string: %v", err)
	}
	if f.pending("s", "g") != 3 {
		t.Error("entries left the PEL")
	}
	if _, err := f.open("s", "nope").DeadLetter(f.ctx, queues.DeadLetterOptions{MinAttempts: 1}); !errors.Is(err, queues.ErrQueueNotFound) {
		t.Errorf("missing group: %v", err)
	}
	if _, err := f.open("s", "nope").Redrive(f.ctx, 0); !errors.Is(err, queues.ErrQueueNotFound) && err != nil {
		t.Errorf("redrive, missing group: %v", err)
	}
}
