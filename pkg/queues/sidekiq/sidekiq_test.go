package sidekiq_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/sidekiq"
	"github.com/redis/go-redis/v9"
)

// job is a payload as Sidekiq 6.4.1 writes it (key order included: the
// default options first, then the job's, then what a failure adds).
func job(q, jid string, extra string) string {
	s := fmt.Sprintf(`{"retry":true,"queue":%q,"class":"RecordJob","args":["x",%q],"jid":%q,"created_at":1795852648.8477182,"enqueued_at":1795852648.847882`, q, jid, jid)
	if extra != "" {
		s += "," + extra
	}
	return s + "}"
}

const failed = `"error_message":"boom <&>","error_class":"ArgumentError","failed_at":1795852632.8304334,"retry_count":2`

// job8 is a payload in Sidekiq 8's format (times in milliseconds).
func job8(q, jid string) string {
	return fmt.Sprintf(`{"retry":true,"queue":%q,"class":"RecordJob","args":[],"jid":%q,"created_at":1795852648847,"enqueued_at":1795852648847,"error_message":"x","error_class":"E","failed_at":1795852648848,"retry_count":0}`, q, jid)
}

type fixture struct {
	t      *testing.T
	ctx    context.Context
	rdb    *redis.Client
	prefix string
	kind   *sidekiq.Kind
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	f := &fixture{t: t, ctx: context.Background(), rdb: rdb, prefix: "app:"}
	f.kind = sidekiq.New(queues.Env{RDB: rdb, Prefix: f.prefix})
	return f
}

func (f *fixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *fixture) open(name string) queues.Queue {
	f.t.Helper()
	q, err := f.kind.Open(name)
	f.must(err)
	return q
}

// push is Client.push: SADD queues, LPUSH queue:<q>.
func (f *fixture) push(q string, raws ...string) {
	f.t.Helper()
	f.must(f.rdb.SAdd(f.ctx, f.prefix+"queues", q).Err())
	for _, r := range raws {
		f.must(f.rdb.LPush(f.ctx, f.prefix+"queue:"+q, r).Err())
	}
}

func (f *fixture) zadd(set string, score float64, raw string) {
	f.t.Helper()
	f.must(f.rdb.ZAdd(f.ctx, f.prefix+set, redis.Z{Score: score, Member: raw}).Err())
}

// process writes a live process's hash and its work hash under the 6.x
// (":workers") or 7.x (":work") name.
func (f *fixture) process(identity, workKey, version string, work map[string]string) {
	f.t.Helper()
	f.must(f.rdb.SAdd(f.ctx, f.prefix+"processes", identity).Err())
	f.must(f.rdb.HSet(f.ctx, f.prefix+identity, "info", `{"hostname":"h","version":"`+version+`"}`, "busy", len(work)).Err())
	for tid, v := range work {
		f.must(f.rdb.HSet(f.ctx, f.prefix+identity+workKey, tid, v).Err())
	}
}

func workValue(q, raw string) string {
	b, _ := json.Marshal(map[string]any{"queue": q, "payload": raw, "run_at": 1795852650})
	return string(b)
}

func (f *fixture) counts(q queues.Queue) *queues.Counts {
	f.t.Helper()
	c, err := q.Counts(f.ctx)
	f.must(err)
	return c
}

func (f *fixture) ids(q queues.Queue, state string) []string {
	f.t.Helper()
	var out []string
	f.must(q.Scan(f.ctx, queues.ScanOptions{State: state, Page: 2}, func(js []queues.Job) error {
		for _, j := range js {
			if j.State != state {
				f.t.Errorf("scan %s passed %s in state %s", state, j.ID, j.State)
			}
			out = append(out, j.ID)
		}
		return nil
	}))
	return out
}

func val(p *int64) string {
	if p == nil {
		return "nil"
	}
	return fmt.Sprint(*p)
}

func TestOpen(t *testing.T) {
	k := sidekiq.New(queues.Env{})
	if _, err := k.Open(""); !errors.Is(err, names.ErrInvalid) {
		t.Errorf("Open(\"\"): %v, want ErrInvalid", err)
	}
	q, err := k.Open("mail:low")
	if err != nil || q.Address() != "sidekiq:mail:low" {
		t.Errorf("Open = %v, %v", q, err)
	}
	if _, ok := q.(queues.Pauser); ok {
		t.Error("a Sidekiq queue is a Pauser: Sidekiq's pause is Enterprise's")
	}
}

// TestRequeued: the pushed JSON differs from the entry only where
// Sidekiq's retry changes it.
func TestRequeued(t *testing.T) {
	now := time.Unix(1795860000, 250000000)
	raw := job("a", "j1", failed+`,"error_backtrace":"eJy1lc"`)
	got, err := sidekiq.Requeued(raw, true, now)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(strings.Replace(raw, `"retry_count":2`, `"retry_count":1`, 1),
		`"enqueued_at":1795852648.847882`, `"enqueued_at":1795860000.25`, 1)
	if got != want {
		t.Errorf("retry:\n got %s\nwant %s", got, want)
	}
	got, err = sidekiq.Requeued(raw, false, now)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, `"retry_count":2`) || !strings.Contains(got, `"enqueued_at":1795860000.25`) {
		t.Errorf("add_to_queue: %s", got)
	}
	// A scheduled entry has no enqueued_at (6.4.1 pushes it to schedule
	// without one): it is added last, as Ruby's hash adds it.
	sched := `{"retry":true,"queue":"a","class":"C","args":[1, {"k": "v"}],"jid":"j2","created_at":1795852648.8}`
	got, err = sidekiq.Requeued(sched, false, time.Unix(1795860000, 0))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSuffix(sched, "}") + `,"enqueued_at":1795860000.0}`; got != want {
		t.Errorf("scheduled:\n got %s\nwant %s", got, want)
	}
	// Without "retry", Client.push's default options come first.
	got, _ = sidekiq.Requeued(`{"queue":"a","class":"C","args":[],"jid":"j3","created_at":1.5,"enqueued_at":2.5}`, true, time.Unix(3, 0))
	if want := `{"retry":true,"queue":"a","class":"C","args":[],"jid":"j3","created_at":1.5,"enqueued_at":3.0}`; got != want {
		t.Errorf("no retry:\n got %s\nwant %s", got, want)
	}
	if _, err := sidekiq.Requeued(`[1]`, true, now); err == nil {
		t.Error("an array requeued")
	}
}

func TestStamp(t *testing.T) {
	for _, c := range []struct {
		raw    string
		want   time.Time
		millis bool
	}{
		{"1795852648.847882", time.Unix(1795852648, 847882000), false},
		{"1795852648847", time.UnixMilli(1795852648847), true},
		{"1795852650", time.Unix(1795852650, 0), false},
		{"null", time.Time{}, false},
		{"", time.Time{}, false},
	} {
		got, ms := sidekiq.Stamp(json.RawMessage(c.raw))
		if !got.Equal(c.want) || ms != c.millis {
			t.Errorf("stamp(%s) = %v, %v; want %v, %v", c.raw, got, ms, c.want, c.millis)
		}
	}
}

// TestRead: every state filtered by the job's queue, under chatq's prefix,
// with the shared sets' counts unknown past CountMax.
func TestRead(t *testing.T) {
	f := newFixture(t)
	f.push("a", job("a", "r1", ""), job("a", "r2", ""))
	f.push("b", job("b", "rb", ""))
	f.zadd("schedule", 1795860000, job("a", "s1", ""))
	f.zadd("schedule", 1795860001, job("b", "sb", ""))
	f.zadd("retry", 1795860002, job("a", "t1", failed))
	f.zadd("retry", 1795860003, job("a", "t2", failed))
	f.zadd("dead", 1795850000, job("b", "db", failed))
	f.zadd("dead", 1795850001, job("a", "d1", failed+`,"error_backtrace":"eJyLVkrUK0qyMrRSyMxTqFDSUUoCcY2UYgFaRQbU\n"`))
	f.zadd("dead", 1795850002, "not json") // not a job: counted by no queue
	f.process("h:1:abc", ":workers", "6.4.1", map[string]string{"t1": workValue("a", job("a", "w1", "")), "t2": workValue("b", job("b", "wb", ""))})
	f.process("h:2:def", ":work", "7.3.9", map[string]string{"t3": workValue("a", job("a", "w2", ""))})
	f.must(f.rdb.SAdd(f.ctx, f.prefix+"processes", "h:3:gone").Err())
	f.must(f.rdb.HSet(f.ctx, f.prefix+"h:3:gone:workers", "t9", workValue("a", job("a", "w9", ""))).Err())
	f.must(f.rdb.LPush(f.ctx, "queue:a", job("a", "unprefixed", "")).Err()) // outside --prefix

	var found []string
	for cursor := uint64(0); ; {
		n, next, err := f.kind.Discover(f.ctx, cursor, 10)
		f.must(err)
		found = append(found, n...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	sort.Strings(found)
	if !slices.Equal(found, []string{"a", "b"}) {
		t.Errorf("discover: %v", found)
	}

	q := f.open("a")
	c := f.counts(q)
	got := fmt.Sprintf("ready %s delayed %s inflight %s retry %s dead %s done %s", val(c.Ready), val(c.Delayed),
		val(c.Inflight), val(c.Retry), val(c.Dead), val(c.Done))
	if want := "ready 2 delayed 1 inflight 2 retry 2 dead 1 done nil"; got != want {
		t.Errorf("counts: %s, want %s", got, want)
	}
	if c.Other["schedule_all"] != 2 || c.Other["retry_all"] != 2 || c.Other["dead_all"] != 3 {
		t.Errorf("other: %v", c.Other)
	}
	if c.Version != "sidekiq 6.4.1" && c.Version != "sidekiq 7.3.9" || c.ReadOnly != "" || c.Paused != nil {
		t.Errorf("version %q, read-only %q, paused %v", c.Version, c.ReadOnly, c.Paused)
	}
	if c.OldestReady == nil || *c.OldestReady <= 0 {
		t.Errorf("oldest ready: %v", c.OldestReady)
	}
	for state, want := range map[string][]string{
		queues.Ready: {"r2", "r1"}, queues.Delayed: {"s1"}, queues.Retry: {"t1", "t2"}, queues.Dead: {"d1"},
		queues.Inflight: {"w1", "w2"},
	} {
		if got := f.ids(q, state); !slices.Equal(got, want) && !(state == queues.Inflight && slices.Equal(got, []string{"w2", "w1"})) {
			t.Errorf("scan %s: %v, want %v", state, got, want)
		}
	}
	if err := q.Scan(f.ctx, queues.ScanOptions{State: queues.Done}, func([]queues.Job) error { return nil }); !errors.Is(err, names.ErrInvalid) {
		t.Errorf("scan done: %v, want ErrInvalid", err)
	}
	var all []string
	f.must(q.Scan(f.ctx, queues.ScanOptions{Max: 4}, func(js []queues.Job) error {
		for _, j := range js {
			all = append(all, j.ID)
		}
		return nil
	}))
	if len(all) != 4 {
		t.Errorf("scan max 4: %v", all)
	}

	j, err := q.Get(f.ctx, "d1")
	f.must(err)
	if j.State != queues.Dead || j.KindState != "dead" || j.Name != "RecordJob" || j.Attempts != 3 ||
		j.Error != "ArgumentError: boom <&>" || j.Stack != "a.rb:1: in x" || !j.Finished.Equal(time.Unix(1795850001, 0)) ||
		!j.Created.Equal(time.Unix(1795852648, 847718000)) {
		t.Errorf("get d1: %+v", j)
	}
	if j.Extra["error_class"] != "ArgumentError" || j.Extra["retry_count"] != int64(2) || j.Extra["failed_at"] == nil {
		t.Errorf("get d1 extra: %v", j.Extra)
	}
	j, err = q.Get(f.ctx, "w2")
	f.must(err)
	if j.State != queues.Inflight || j.Consumer != "h:2:def:t3" || !j.Started.Equal(time.Unix(1795852650, 0)) {
		t.Errorf("get w2: %+v", j)
	}
	j, err = q.Get(f.ctx, "s1")
	f.must(err)
	if j.State != queues.Delayed || !j.Due.Equal(time.Unix(1795860000, 0)) {
		t.Errorf("get s1: %+v", j)
	}
	for _, id := range []string{"rb", "sb", "db", "nope", "w9", "unprefixed"} {
		if _, err := q.Get(f.ctx, id); !errors.Is(err, queues.ErrJobNotFound) {
			t.Errorf("get %s: %v, want ErrJobNotFound", id, err)
		}
	}

	// Past CountMax, a queue's share of a set is unknown, not guessed.
	f.kind.CountMax = 1
	c = f.counts(q)
	if c.Delayed != nil || c.Retry != nil || c.Dead != nil || *c.Ready != 2 || c.Other["dead_all"] != 3 {
		t.Errorf("counts past CountMax: delayed %s retry %s dead %s other %v", val(c.Delayed), val(c.Retry), val(c.Dead), c.Other)
	}
	f.kind.CountMax = 1000

	if _, err := f.open("nosuch").Counts(f.ctx); !errors.Is(err, queues.ErrQueueNotFound) {
		t.Errorf("counts of a queue with nothing: %v", err)
	}
}

// contents is every key under the prefix with its entries, sorted.
func (f *fixture) contents() string {
	f.t.Helper()
	keys, err := f.rdb.Keys(f.ctx, f.prefix+"*").Result() // a test's own small server
	f.must(err)
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		switch f.rdb.Type(f.ctx, k).Val() {
		case "list":
			fmt.Fprintln(&b, k, f.rdb.LRange(f.ctx, k, 0, -1).Val())
		case "zset":
			fmt.Fprintln(&b, k, f.rdb.ZRangeWithScores(f.ctx, k, 0, -1).Val())
		case "set":
			v := f.rdb.SMembers(f.ctx, k).Val()
			sort.Strings(v)
			fmt.Fprintln(&b, k, v)
		case "hash":
			fmt.Fprintln(&b, k, f.rdb.HGetAll(f.ctx, k).Val())
		}
	}
	return b.String()
}

func TestActions(t *testing.T) {
	f := newFixture(t)
	f.push("a", job("a", "r1", ""), job("a", "r2", ""))
	f.zadd("schedule", 1795860000, job("a", "s1", ""))
	f.zadd("retry", 1795860002, job("a", "t1", failed))
	f.zadd("retry", 1795860003, job("b", "tb", failed))
	f.zadd("dead", 1795850000, job("a", "d1", failed))
	f.zadd("dead", 1795850001, job("b", "db", failed))
	f.zadd("dead", 1795850002, job("a", "d2", failed))
	f.process("h:1:abc", ":workers", "6.4.1", map[string]string{"t1": workValue("a", job("a", "w1", ""))})
	q := f.open("a")
	listHead := func(q string) map[string]any {
		t.Helper()
		raw, err := f.rdb.LIndex(f.ctx, f.prefix+"queue:"+q, 0).Result()
		f.must(err)
		var m map[string]any
		f.must(json.Unmarshal([]byte(raw), &m))
		return m
	}

	res, err := q.(queues.Retrier).Retry(f.ctx, []string{"t1", "s1", "tb", "r1", "w1", "nope"})
	f.must(err)
	if !slices.Equal(res.Done, []string{"t1", "s1"}) || len(res.Skipped) != 4 {
		t.Errorf("retry: %+v", res)
	}
	if h := listHead("a"); h["jid"] != "s1" || h["retry_count"] != nil {
		t.Errorf("retried scheduled job: %v", h)
	}
	raw := f.rdb.LIndex(f.ctx, f.prefix+"queue:a", 1).Val()
	if !strings.Contains(raw, `"retry_count":1`) || !strings.Contains(raw, `"error_message":"boom <&>"`) {
		t.Errorf("retried job: %s", raw)
	}
	if n := f.rdb.ZCard(f.ctx, f.prefix+"retry").Val(); n != 1 {
		t.Errorf("retry set: %d", n)
	}

	// An entry changed between chatq finding it and moving it is skipped,
	// and the changed entry is left as it is.
	sidekiq.SetAfterLocate(func(id string) {
		if id == "d1" {
			f.must(f.rdb.ZRem(f.ctx, f.prefix+"dead", job("a", "d1", failed)).Err())
			f.zadd("dead", 1795850005, job("a", "d1", failed+`,"retried_at":1.5`))
		}
	})
	before := f.contents()
	res, err = q.(queues.Retrier).Retry(f.ctx, []string{"d1"})
	f.must(err)
	sidekiq.SetAfterLocate(nil)
	if len(res.Done) != 0 || !strings.Contains(res.Skipped["d1"], "changed meanwhile") {
		t.Errorf("retry of a changed entry: %+v", res)
	}
	if after := f.contents(); strings.Contains(after, `"jid":"d1","created_at":1795852648.8477182,"enqueued_at":17958`) && after == before {
		t.Errorf("nothing changed by the hook?")
	}

	res, err = q.(queues.Remover).Remove(f.ctx, []string{"r2", "db", "w1", "d2"}, true)
	f.must(err)
	if !slices.Equal(res.Done, []string{"r2", "d2"}) || len(res.Skipped) != 2 || !strings.Contains(res.Skipped["w1"], "in flight") {
		t.Errorf("remove: %+v", res)
	}
	if ids := f.ids(q, queues.Ready); !slices.Equal(ids, []string{"s1", "t1", "r1"}) {
		t.Errorf("ready after remove: %v", ids)
	}

	f.zadd("dead", 1795850003, job("a", "d3", failed))
	f.zadd("dead", 1795850004, job("a", "d4", failed))
	res, err = q.(queues.Redriver).Redrive(f.ctx, 2)
	f.must(err)
	if len(res.Done) != 2 {
		t.Errorf("redrive 2: %+v", res)
	}
	res, err = q.(queues.Redriver).Redrive(f.ctx, 0)
	f.must(err)
	if len(res.Done) != 1 {
		t.Errorf("redrive the rest: %+v", res)
	}
	if got := f.rdb.ZRange(f.ctx, f.prefix+"dead", 0, -1).Val(); len(got) != 1 || !strings.Contains(got[0], `"jid":"db"`) {
		t.Errorf("dead after redrive: %v (only b's job should be left)", got)
	}
	if c := f.counts(q); *c.Ready != 6 || *c.Dead != 0 || *c.Retry != 0 || *c.Delayed != 0 {
		t.Errorf("counts after the actions: ready %s dead %s", val(c.Ready), val(c.Dead))
	}
	if !f.rdb.SIsMember(f.ctx, f.prefix+"queues", "a").Val() {
		t.Error("queues lost a")
	}
}

// TestReadOnly: a job in Sidekiq 8's format is read, removed, but not
// retried or redriven.
func TestReadOnly(t *testing.T) {
	f := newFixture(t)
	f.zadd("retry", 1795860002, job8("a", "e1"))
	f.zadd("dead", 1795850002, job8("a", "e2"))
	f.zadd("dead", 1795850003, job8("a", "e3"))
	q := f.open("a")
	j, err := q.Get(f.ctx, "e1")
	f.must(err)
	if !j.Created.Equal(time.UnixMilli(1795852648847)) {
		t.Errorf("8's created_at: %v", j.Created)
	}
	before := f.contents()
	res, err := q.(queues.Retrier).Retry(f.ctx, []string{"e1"})
	if !errors.Is(err, queues.ErrReadOnly) || len(res.Done) != 0 {
		t.Errorf("retry of an 8.x job: %+v, %v", res, err)
	}
	res, err = q.(queues.Redriver).Redrive(f.ctx, 0)
	if !errors.Is(err, queues.ErrReadOnly) || len(res.Done) != 0 || len(res.Skipped) != 2 {
		t.Errorf("redrive of 8.x jobs: %+v, %v", res, err)
	}
	if after := f.contents(); after != before {
		t.Errorf("read-only writes changed:\n%s\nto\n%s", before, after)
	}
	res, err = q.(queues.Remover).Remove(f.ctx, []string{"e3"}, false)
	if err != nil || !slices.Equal(res.Done, []string{"e3"}) {
		t.Errorf("remove of an 8.x job: %+v, %v", res, err)
	}
	f.process("h:1:abc", ":work", "8.0.1", nil)
	if c := f.counts(q); !strings.Contains(c.ReadOnly, "read-only") {
		t.Errorf("counts with an 8.x process: read-only %q", c.ReadOnly)
	}
}

// TestRemoveBigList: a job in the first 10,000 of a long list is
// removed (LREM stops where LPOS found it); one past them is not found,
// and the error says how much was searched.
func TestRemoveBigList(t *testing.T) {
	f := newFixture(t)
	key := f.prefix + "queue:big"
	for i := 0; i < 100_001; i += 10_000 {
		_, err := f.rdb.Pipelined(f.ctx, func(p redis.Pipeliner) error {
			for j := i; j < min(i+10_000, 100_001); j++ {
				p.RPush(f.ctx, key, job("big", fmt.Sprint("j", j), ""))
			}
			return nil
		})
		f.must(err)
	}
	q := f.open("big")
	res, err := q.(queues.Remover).Remove(f.ctx, []string{"j5", "j9999", "j50000"}, false)
	f.must(err)
	if !slices.Equal(res.Done, []string{"j5", "j9999"}) || !strings.Contains(res.Skipped["j50000"], "not found") {
		t.Errorf("remove from a big list: %+v", res)
	}
	if n := f.rdb.LLen(f.ctx, key).Val(); n != 99_999 {
		t.Errorf("list has %d", n)
	}
	if _, err := q.Get(f.ctx, "j50000"); !errors.Is(err, queues.ErrJobNotFound) || !strings.Contains(err.Error(), "first 10000") {
		t.Errorf("get past the searched part: %v", err)
	}
}
