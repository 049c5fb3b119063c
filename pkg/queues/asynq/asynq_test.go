package asynq

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/encoding/protowire"
)

// encode writes m as asynq's generated code marshals a TaskMessage:
// fields in number order, zero values left out.
func encode(m *message) []byte {
	var b []byte
	str := func(num protowire.Number, s string) {
		if s != "" {
			b = protowire.AppendString(protowire.AppendTag(b, num, protowire.BytesType), s)
		}
	}
	num := func(n protowire.Number, v int64) {
		if v != 0 {
			b = protowire.AppendVarint(protowire.AppendTag(b, n, protowire.VarintType), uint64(v))
		}
	}
	str(fieldType, m.Type)
	if len(m.Payload) > 0 {
		b = protowire.AppendBytes(protowire.AppendTag(b, fieldPayload, protowire.BytesType), m.Payload)
	}
	str(fieldID, m.ID)
	str(fieldQueue, m.Queue)
	num(fieldRetry, m.Retry)
	num(fieldRetried, m.Retried)
	str(fieldErrorMsg, m.ErrorMsg)
	num(fieldTimeout, m.Timeout)
	num(fieldDeadline, m.Deadline)
	str(fieldUniqueKey, m.UniqueKey)
	num(fieldLastFailedAt, m.LastFailedAt)
	num(fieldRetention, m.Retention)
	num(fieldCompletedAt, m.CompletedAt)
	str(fieldGroupKey, m.GroupKey)
	keys := make([]string, 0, len(m.Headers))
	for k := range m.Headers {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		var e []byte
		e = protowire.AppendString(protowire.AppendTag(e, 1, protowire.BytesType), k)
		e = protowire.AppendString(protowire.AppendTag(e, 2, protowire.BytesType), m.Headers[k])
		b = protowire.AppendBytes(protowire.AppendTag(b, fieldHeaders, protowire.BytesType), e)
	}
	return b
}

func TestMessage(t *testing.T) {
	m := &message{Type: "email:send", Payload: []byte(`{"to":"a"}`), Headers: map[string]string{"h": "v", "a": "b"},
		ID: "id1", Queue: "q", Retry: 25, Retried: 3, ErrorMsg: "boom", LastFailedAt: 1700000000, Timeout: 1800,
		Deadline: 1700000500, UniqueKey: "asynq:{q}:unique:x", GroupKey: "g", Retention: 3600, CompletedAt: 1700000100}
	got, err := decodeMessage(encode(m))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(m) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", got, m)
	}
	// A negative int32 is ten bytes, sign-extended.
	neg := protowire.AppendVarint(protowire.AppendTag(nil, fieldRetry, protowire.VarintType), math.MaxUint64)
	if got, err := decodeMessage(neg); err != nil || got.Retry != -1 {
		t.Fatalf("retry -1: %+v %v", got, err)
	}
	// An unknown field is kept and reported.
	unk := protowire.AppendString(protowire.AppendTag(encode(m), 16, protowire.BytesType), "new")
	if got, err := decodeMessage(unk); err != nil || !slices.Equal(got.Unknown, []protowire.Number{16}) {
		t.Fatalf("unknown field: %+v %v", got, err)
	}
	for _, bad := range [][]byte{{0x0a, 0x05, 'a'}, {0x08}, protowire.AppendVarint(protowire.AppendTag(nil, fieldType, protowire.VarintType), 1)} {
		if _, err := decodeMessage(bad); !errors.Is(err, errMessage) {
			t.Errorf("%x: err %v, want errMessage", bad, err)
		}
	}
}

// TestFailed checks that failed rewrites the message as asynq's broker
// does: the same bytes as encoding the changed message.
func TestFailed(t *testing.T) {
	m := &message{Type: "t", Payload: []byte("p"), ID: "i", Queue: "q", Retry: 5, Retried: 0, Timeout: 60,
		Headers: map[string]string{"k": "v"}}
	b := encode(m)
	got, err := failed(b, 1, errLeaseExpired, 1700000000)
	if err != nil {
		t.Fatal(err)
	}
	want := *m
	want.Retried, want.ErrorMsg, want.LastFailedAt = 1, errLeaseExpired, 1700000000
	if string(got) != string(encode(&want)) {
		t.Fatalf("got %x\nwant %x", got, encode(&want))
	}
	// retried -1 keeps it (an archive); an unknown field is kept in place.
	b = protowire.AppendString(protowire.AppendTag(encode(&want), 16, protowire.BytesType), "x")
	got, err = failed(b, -1, "again", 1700000001)
	if err != nil {
		t.Fatal(err)
	}
	d, err := decodeMessage(got)
	if err != nil || d.Retried != 1 || d.ErrorMsg != "again" || d.LastFailedAt != 1700000001 || !slices.Equal(d.Unknown, []protowire.Number{16}) {
		t.Fatalf("%+v %v", d, err)
	}
}

// fixture is a queue on a private server with chatq's prefix, and the
// layout written by hand as asynq writes it.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	c      *redis.Client
	k      *Kind
	q      *Queue
	prefix string
}

func newFixture(t *testing.T, name string) *fixture {
	t.Helper()
	c := redistest.StartServer(t).Client()
	prefix := "test:"
	k := New(queues.Env{RDB: c, Prefix: prefix})
	qq, err := k.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, ctx: context.Background(), c: c, k: k, q: qq.(*Queue), prefix: prefix}
	f.must(c.SAdd(f.ctx, prefix+"asynq:queues", name).Err())
	return f
}

func (f *fixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

// add writes a task as asynq does in state, with score (due, archived at,
// expiry, lease expiry) for the states kept in a sorted set.
func (f *fixture) add(state, id string, m *message, score int64) {
	f.t.Helper()
	m.ID, m.Queue = id, f.q.name
	if m.Type == "" {
		m.Type = "task"
	}
	key := f.q.taskPrefix() + id
	fields := []any{"msg", encode(m), "state", state}
	switch state {
	case statePending:
		fields = append(fields, "pending_since", strconv.FormatInt(time.Now().Add(-time.Minute).UnixNano(), 10))
		f.must(f.c.LPush(f.ctx, f.q.key(statePending), id).Err())
	case stateActive:
		f.must(f.c.LPush(f.ctx, f.q.key(stateActive), id).Err())
		f.must(f.c.ZAdd(f.ctx, f.q.key("lease"), redis.Z{Score: float64(score), Member: id}).Err())
	case stateAggregating:
		fields = append(fields, "group", m.GroupKey)
		f.must(f.c.SAdd(f.ctx, f.q.key("groups"), m.GroupKey).Err())
		f.must(f.c.ZAdd(f.ctx, f.q.key("g:"+m.GroupKey), redis.Z{Score: float64(score), Member: id}).Err())
	default:
		f.must(f.c.ZAdd(f.ctx, f.q.key(state), redis.Z{Score: float64(score), Member: id}).Err())
	}
	if m.UniqueKey != "" {
		fields = append(fields, "unique_key", m.UniqueKey)
		f.must(f.c.Set(f.ctx, f.prefix+m.UniqueKey, id, 0).Err())
	}
	f.must(f.c.HSet(f.ctx, key, fields...).Err())
}

// state is the task's state field ("" when it has no hash).
func (f *fixture) state(id string) string {
	return f.c.HGet(f.ctx, f.q.taskPrefix()+id, "state").Val()
}

// contents is every key under the prefix with its value.
func (f *fixture) contents() string { return redistest.Contents(f.t, f.c, f.prefix) }

func TestDiscoverOpen(t *testing.T) {
	f := newFixture(t, "default")
	f.must(f.c.SAdd(f.ctx, f.prefix+"asynq:queues", "critical", " ").Err())
	// asynq's own keys, without chatq's prefix, are not found.
	f.must(f.c.SAdd(f.ctx, "asynq:queues", "unprefixed").Err())
	var got []string
	var cursor uint64
	for {
		names, next, err := f.k.Discover(f.ctx, cursor, 1)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, names...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	slices.Sort(got)
	if !slices.Equal(slices.Compact(got), []string{"critical", "default"}) {
		t.Fatalf("discovered %q", got)
	}
	if f.k.Name() != "asynq" || f.q.Address() != "asynq:default" {
		t.Fatalf("name %q address %q", f.k.Name(), f.q.Address())
	}
	for _, bad := range []string{"", "  ", "\xff"} {
		if _, err := f.k.Open(bad); !errors.Is(err, names.ErrInvalid) {
			t.Errorf("Open(%q): %v, want ErrInvalid", bad, err)
		}
	}
	missing, _ := f.k.Open("nosuch")
	if _, err := missing.Counts(f.ctx); !errors.Is(err, queues.ErrQueueNotFound) {
		t.Fatalf("Counts of a queue asynq does not name: %v", err)
	}
	if _, err := missing.(*Queue).Retry(f.ctx, []string{"x"}); !errors.Is(err, queues.ErrQueueNotFound) {
		t.Fatalf("Retry in a queue asynq does not name: %v", err)
	}
}

// filled is a queue with tasks in every state.
func filled(t *testing.T) *fixture {
	f := newFixture(t, "q")
	now := time.Now().Unix()
	f.add(statePending, "p1", &message{Type: "email", Payload: []byte(`{"to":"ann"}`)}, 0)
	f.add(statePending, "p2", &message{Type: "email", Payload: []byte{0xff, 0x00}}, 0)
	f.add(statePending, "p3", &message{Type: "sms", Payload: []byte(`hi`), Retry: 3}, 0)
	f.add(stateActive, "a1", &message{Type: "email", Retry: 25}, now+30)
	f.add(stateScheduled, "s1", &message{Type: "email"}, now+3600)
	f.add(stateRetry, "r1", &message{Type: "email", Retry: 25, Retried: 2, ErrorMsg: "smtp down", LastFailedAt: now - 10}, now+60)
	f.add(stateArchived, "d1", &message{Type: "email", Retried: 25, Retry: 25, ErrorMsg: "gave up", LastFailedAt: now - 5}, now-5)
	f.add(stateCompleted, "c1", &message{Type: "email", Retention: 3600, CompletedAt: now - 1}, now+3599)
	f.add(stateAggregating, "g1", &message{Type: "email", GroupKey: "grp"}, now)
	return f
}

func TestCountsScanGet(t *testing.T) {
	f := filled(t)
	f.must(f.c.Set(f.ctx, f.q.key("paused"), time.Now().Unix(), 0).Err())
	c, err := f.q.Counts(f.ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, s := range queues.States {
		got[s] = *c.Of(s)
	}
	want := map[string]int64{"ready": 3, "delayed": 1, "inflight": 1, "retry": 1, "dead": 1, "done": 1}
	if fmt.Sprint(got) != fmt.Sprint(want) || !*c.Paused || fmt.Sprint(c.Other) != "map[aggregating:1 groups:1]" || c.ReadOnly != "" {
		t.Fatalf("counts %v paused %v other %v readonly %q", got, *c.Paused, c.Other, c.ReadOnly)
	}
	if c.OldestReady == nil || *c.OldestReady < 50*time.Second || *c.OldestReady > 10*time.Minute {
		t.Fatalf("oldest ready %v, want about a minute", c.OldestReady)
	}

	// Pending: the next asynq takes (the tail) first.
	var ids []string
	var jobs []queues.Job
	err = f.q.Scan(f.ctx, queues.ScanOptions{Page: 2}, func(page []queues.Job) error {
		if len(page) > 2 {
			t.Errorf("page of %d", len(page))
		}
		for _, j := range page {
			ids = append(ids, j.ID)
			jobs = append(jobs, j)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, " ") != "p1 p2 p3 s1 a1 r1 d1 c1" {
		t.Fatalf("scan order %q", ids)
	}
	byID := map[string]queues.Job{}
	for _, j := range jobs {
		byID[j.ID] = j
	}
	if j := byID["p1"]; j.State != queues.Ready || j.KindState != "pending" || j.Name != "email" || j.Data != `{"to":"ann"}` || j.Extra["pending_since"] == nil {
		t.Errorf("p1 %+v", j)
	}
	if j := byID["p2"]; j.Data != "/wA=" || j.Extra["payload_encoding"] != "base64" {
		t.Errorf("p2 %+v", j)
	}
	if j := byID["r1"]; j.State != queues.Retry || j.Attempts != 2 || j.Error != "smtp down" || j.Due.IsZero() || j.Extra["max_retry"] != int64(25) {
		t.Errorf("r1 %+v", j)
	}
	if j := byID["d1"]; j.State != queues.Dead || j.Finished.IsZero() || j.Error != "gave up" {
		t.Errorf("d1 %+v", j)
	}
	if j := byID["c1"]; j.State != queues.Done || j.Finished.Unix() != time.Now().Unix()-1 && j.Finished.IsZero() || j.Extra["retention"] != int64(3600) {
		t.Errorf("c1 %+v", j)
	}
	if j := byID["a1"]; j.State != queues.Inflight || j.Extra["lease_expires_at"] == nil || j.Idle > 5*time.Second {
		t.Errorf("a1 %+v", j)
	}

	// Filters, Max and a stop.
	count := func(opt queues.ScanOptions) (n int) {
		t.Helper()
		if err := f.q.Scan(f.ctx, opt, func(p []queues.Job) error { n += len(p); return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, c := range []struct {
		opt  queues.ScanOptions
		want int
	}{
		{queues.ScanOptions{Grep: "ann"}, 1},
		{queues.ScanOptions{Grep: "\xff\x00"}, 1}, // p2's binary payload, as stored
		{queues.ScanOptions{Grep: "sms"}, 1},
		{queues.ScanOptions{Grep: "r1"}, 1},
		{queues.ScanOptions{State: queues.Ready}, 3},
		{queues.ScanOptions{MinAttempts: 2}, 2},
		{queues.ScanOptions{Max: 4, Page: 3}, 4},
		{queues.ScanOptions{InflightFor: time.Minute}, 0},
	} {
		if n := count(c.opt); n != c.want {
			t.Errorf("%+v: %d jobs, want %d", c.opt, n, c.want)
		}
	}
	n := 0
	if err := f.q.Scan(f.ctx, queues.ScanOptions{Page: 1}, func(p []queues.Job) error { n++; return queues.ErrStop }); err != nil || n != 1 {
		t.Fatalf("stop: %v after %d pages", err, n)
	}
	if err := f.q.Scan(f.ctx, queues.ScanOptions{State: "bogus"}, nil); !errors.Is(err, names.ErrInvalid) {
		t.Fatalf("bad state: %v", err)
	}

	// Get, in each state.
	for id, state := range map[string]string{"p1": "ready", "s1": "delayed", "a1": "inflight", "r1": "retry", "d1": "dead", "c1": "done", "g1": ""} {
		j, err := f.q.Get(f.ctx, id)
		if err != nil || j.State != state || j.ID != id {
			t.Errorf("Get %s: %+v %v, want state %q", id, j, err, state)
		}
	}
	if j, _ := f.q.Get(f.ctx, "s1"); j.Due.Unix() < time.Now().Unix()+3500 {
		t.Errorf("s1 due %v", j.Due)
	}
	if _, err := f.q.Get(f.ctx, "nosuch"); !errors.Is(err, queues.ErrJobNotFound) {
		t.Fatalf("Get of a missing task: %v", err)
	}
}

func TestRetry(t *testing.T) {
	f := filled(t)
	f.must(f.c.HDel(f.ctx, f.q.taskPrefix()+"p3", "state").Err()) // a layout chatq does not know
	res, err := f.q.Retry(f.ctx, []string{"s1", "r1", "d1", "p1", "a1", "c1", "g1", "p3", "nosuch", "d1"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Done, " ") != "s1 r1 d1" || len(res.Skipped) != 6 {
		t.Fatalf("done %q skipped %v", res.Done, res.Skipped)
	}
	if !strings.Contains(res.Skipped["p3"], queues.ErrReadOnly.Error()) || res.Skipped["nosuch"] != "not found" {
		t.Fatalf("skipped %v", res.Skipped)
	}
	for _, id := range []string{"s1", "r1", "d1"} {
		if f.state(id) != statePending {
			t.Errorf("%s: state %q", id, f.state(id))
		}
	}
	// As RunTask: at the head of pending, out of their sets.
	if got := f.c.LRange(f.ctx, f.q.key(statePending), 0, 2).Val(); !slices.Equal(got, []string{"d1", "r1", "s1"}) {
		t.Fatalf("pending head %q", got)
	}
	for _, s := range []string{stateScheduled, stateRetry, stateArchived} {
		if n := f.c.ZCard(f.ctx, f.q.key(s)).Val(); n != 0 {
			t.Errorf("%s holds %d", s, n)
		}
	}
}

func TestRemove(t *testing.T) {
	f := filled(t)
	now := time.Now().Unix()
	f.add(stateActive, "a2", &message{}, now-31) // lease expired more than 30 s ago
	f.add(stateScheduled, "u1", &message{UniqueKey: "asynq:{q}:unique:email:x"}, now+10)
	res, err := f.q.Remove(f.ctx, []string{"p1", "s1", "r1", "d1", "c1", "g1", "u1", "a1", "a2", "nosuch"}, false)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Done, " ") != "p1 s1 r1 d1 c1 g1 u1" || len(res.Skipped) != 3 {
		t.Fatalf("done %q skipped %v", res.Done, res.Skipped)
	}
	for _, id := range res.Done {
		if n := f.c.Exists(f.ctx, f.q.taskPrefix()+id).Val(); n != 0 {
			t.Errorf("%s still has its hash", id)
		}
	}
	if f.c.Exists(f.ctx, f.prefix+"asynq:{q}:unique:email:x", f.q.key("groups"), f.q.key("g:grp")).Val() != 0 {
		t.Fatal("the uniqueness lock or the emptied group is left")
	}
	if got := f.c.LRange(f.ctx, f.q.key(statePending), 0, -1).Val(); !slices.Equal(got, []string{"p3", "p2"}) {
		t.Fatalf("pending %q", got)
	}
	// Forced: the expired lease goes, the live one stays.
	res, err = f.q.Remove(f.ctx, []string{"a1", "a2"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(res.Done, " ") != "a2" || !strings.Contains(res.Skipped["a1"], "live lease") {
		t.Fatalf("forced: done %q skipped %v", res.Done, res.Skipped)
	}
	if got := f.c.LRange(f.ctx, f.q.key(stateActive), 0, -1).Val(); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("active %q", got)
	}
	if f.c.ZScore(f.ctx, f.q.key("lease"), "a2").Err() != redis.Nil {
		t.Fatal("a2's lease is left")
	}
}

// TestRemoveDeep: a pending task far from both ends of a long list is
// left, not searched for with a walk of the list.
func TestRemoveDeep(t *testing.T) {
	f := newFixture(t, "q")
	var ids []any
	p := f.c.Pipeline()
	for i := range 2*listReach + 11 {
		id := fmt.Sprintf("t%05d", i)
		ids = append(ids, id)
		p.HSet(f.ctx, f.q.taskPrefix()+id, "msg", encode(&message{Type: "x", ID: id, Queue: "q"}), "state", "pending")
	}
	p.LPush(f.ctx, f.q.key(statePending), ids...)
	_, err := p.Exec(f.ctx)
	f.must(err)
	mid := fmt.Sprintf("t%05d", listReach+5)
	res, err := f.q.Remove(f.ctx, []string{mid, "t00000", fmt.Sprintf("t%05d", 2*listReach+10)}, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Done) != 2 || !strings.Contains(res.Skipped[mid], "walk") {
		t.Fatalf("done %q skipped %v", res.Done, res.Skipped)
	}
	if n := f.c.LLen(f.ctx, f.q.key(statePending)).Val(); n != int64(len(ids)-2) {
		t.Fatalf("pending has %d", n)
	}
}

func TestRedrive(t *testing.T) {
	f := newFixture(t, "q")
	now := time.Now().Unix()
	for i := range 250 {
		f.add(stateArchived, fmt.Sprintf("d%03d", i), &message{Retried: 1, Retry: 1}, now-int64(1000-i))
	}
	// One whose hash says retry, though archived lists it: left.
	f.must(f.c.HSet(f.ctx, f.q.taskPrefix()+"d005", "state", stateRetry).Err())
	res, err := f.q.Redrive(f.ctx, 120)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Done) != 120 || res.Done[0] != "d000" || res.Done[5] != "d006" || len(res.Skipped) != 1 {
		t.Fatalf("done %d (%q...) skipped %v", len(res.Done), res.Done[:6], res.Skipped)
	}
	res, err = f.q.Redrive(f.ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Done) != 129 {
		t.Fatalf("second redrive moved %d", len(res.Done))
	}
	if n := f.c.LLen(f.ctx, f.q.key(statePending)).Val(); n != 249 {
		t.Fatalf("pending %d", n)
	}
	if got := f.c.ZRange(f.ctx, f.q.key(stateArchived), 0, -1).Val(); !slices.Equal(got, []string{"d005"}) {
		t.Fatalf("archived left %q", got)
	}
	if f.state("d249") != statePending {
		t.Fatalf("d249 %q", f.state("d249"))
	}
}

func TestPauseResume(t *testing.T) {
	f := newFixture(t, "q")
	for range 2 {
		if err := f.q.Pause(f.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if c, _ := f.q.Counts(f.ctx); !*c.Paused {
		t.Fatal("not paused")
	}
	if v := f.c.Get(f.ctx, f.q.key("paused")).Val(); v == "" || v[0] == '0' {
		t.Fatalf("paused holds %q", v)
	}
	if err := f.q.Resume(f.ctx); err != nil {
		t.Fatal(err)
	}
	if c, _ := f.q.Counts(f.ctx); *c.Paused {
		t.Fatal("still paused")
	}
}

func TestRecover(t *testing.T) {
	f := newFixture(t, "q")
	now := time.Now().Unix()
	f.add(stateActive, "gone", &message{Type: "x", Retry: 3, Retried: 1}, now-31)
	f.add(stateActive, "spent", &message{Type: "x", Retry: 2, Retried: 2}, now-100)
	f.add(stateActive, "alive", &message{Type: "x", Retry: 3}, now+20)
	f.add(stateActive, "recent", &message{Type: "x", Retry: 3}, now-5) // expired, within asynq's 30 s grace
	res, err := f.q.Recover(f.ctx, queues.RecoverOptions{})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(res.Done)
	if strings.Join(res.Done, " ") != "gone spent" || len(res.Skipped) != 0 {
		t.Fatalf("done %q skipped %v", res.Done, res.Skipped)
	}
	if f.state("gone") != stateRetry || f.state("spent") != stateArchived {
		t.Fatalf("states %q %q", f.state("gone"), f.state("spent"))
	}
	j, err := f.q.Get(f.ctx, "gone")
	if err != nil || j.Attempts != 2 || j.Error != errLeaseExpired || j.Extra["last_failed_at"] == nil || j.Due.Unix() > time.Now().Unix() {
		t.Fatalf("gone %+v %v", j, err)
	}
	j, err = f.q.Get(f.ctx, "spent")
	if err != nil || j.Attempts != 2 || j.Error != errLeaseExpired {
		t.Fatalf("spent %+v %v", j, err)
	}
	if got := f.c.LRange(f.ctx, f.q.key(stateActive), 0, -1).Val(); !slices.Equal(got, []string{"recent", "alive"}) {
		t.Fatalf("active %q", got)
	}
	if got := f.c.ZCard(f.ctx, f.q.key("lease")).Val(); got != 2 {
		t.Fatalf("lease holds %d", got)
	}
	day := time.Now().UTC().Format("2006-01-02")
	for _, k := range []string{"processed", "failed", "processed:" + day, "failed:" + day} {
		if v := f.c.Get(f.ctx, f.q.key(k)).Val(); v != "2" {
			t.Errorf("%s = %q, want 2", k, v)
		}
	}
	if ttl := f.c.TTL(f.ctx, f.q.key("failed:"+day)).Val(); ttl < 80*24*time.Hour {
		t.Errorf("failed:%s expires in %v", day, ttl)
	}
	// By id: one with a live lease is reported.
	res, err = f.q.Recover(f.ctx, queues.RecoverOptions{IDs: []string{"alive"}})
	if err != nil || len(res.Done) != 0 || res.Skipped["alive"] == "" {
		t.Fatalf("alive: %+v %v", res, err)
	}
}

// TestReadOnly: a queue with asynq 0.21's deadlines set reads, and every
// write is refused with ErrReadOnly, changing nothing.
func TestReadOnly(t *testing.T) {
	f := filled(t)
	f.must(f.c.ZAdd(f.ctx, f.q.key("deadlines"), redis.Z{Score: 1, Member: "a1"}).Err())
	c, err := f.q.Counts(f.ctx)
	if err != nil || c.ReadOnly == "" {
		t.Fatalf("counts %+v %v", c, err)
	}
	before := f.contents()
	writes := map[string]func() error{
		"Retry":   func() error { _, err := f.q.Retry(f.ctx, []string{"d1"}); return err },
		"Remove":  func() error { _, err := f.q.Remove(f.ctx, []string{"d1"}, true); return err },
		"Redrive": func() error { _, err := f.q.Redrive(f.ctx, 0); return err },
		"Pause":   func() error { return f.q.Pause(f.ctx) },
		"Resume":  func() error { return f.q.Resume(f.ctx) },
		"Recover": func() error { _, err := f.q.Recover(f.ctx, queues.RecoverOptions{}); return err },
	}
	for op, w := range writes {
		if err := w(); !errors.Is(err, queues.ErrReadOnly) || !strings.Contains(err.Error(), "0.26") {
			t.Errorf("%s: %v, want ErrReadOnly naming the versions", op, err)
		}
	}
	if after := f.contents(); after != before {
		t.Fatal("a refused write changed the data")
	}
}

// TestWrongType: a key of the wrong type fails a write before it writes.
func TestWrongType(t *testing.T) {
	f := filled(t)
	f.must(f.c.Del(f.ctx, f.q.key(statePending)).Err())
	f.must(f.c.Set(f.ctx, f.q.key(statePending), "x", 0).Err())
	before := f.contents()
	if _, err := f.q.Retry(f.ctx, []string{"d1"}); err == nil || !strings.Contains(err.Error(), "nothing written") {
		t.Fatalf("retry: %v", err)
	}
	if _, err := f.q.Redrive(f.ctx, 0); err == nil {
		t.Fatal("redrive into a string succeeded")
	}
	if f.contents() != before {
		t.Fatal("a failed write changed the data")
	}
}

// TestAccess checks that every command the scripts call is listed for
// the operations that run them.
func TestAccess(t *testing.T) {
	ops := map[string][]string{}
	for _, a := range New(queues.Env{}).Access() {
		ops[a.Op] = a.Commands
	}
	uses := map[string][]string{
		"Counts": {countsLua}, "Scan": {pageLua}, "Get": {getLua}, "Retry": {runLua},
		"Remove": {deleteLua}, "Redrive": {redriveLua}, "Recover": {leasedLua, recoverLua},
	}
	// lib.lua: its checks run in every writer, listend where called.
	at := strings.Index(libLua, "local function listend")
	for op, src := range map[string]string{"Retry": runLua, "Remove": deleteLua, "Redrive": redriveLua, "Recover": recoverLua} {
		lib := libLua[:at]
		if strings.Contains(src, "listend(") {
			lib = libLua
		}
		uses[op] = append(uses[op], lib)
	}
	for op, srcs := range uses {
		for _, src := range srcs {
			for _, part := range strings.Split(src, `redis.call("`)[1:] {
				cmd := strings.ToLower(part[:strings.IndexByte(part, '"')])
				if !slices.Contains(ops[op], cmd) {
					t.Errorf("%s calls %s, which its Access does not list", op, cmd)
				}
			}
		}
	}
}

// TestRecoverRecheck: the write script re-checks each task; one whose msg
// changed since it was read, or whose lease was extended, is left.
func TestRecoverRecheck(t *testing.T) {
	f := newFixture(t, "q")
	now := time.Now().Unix()
	f.add(stateActive, "a", &message{Type: "x", Retry: 3}, now-60)
	f.add(stateActive, "b", &message{Type: "x", Retry: 3}, now-60)
	msgA := f.c.HGet(f.ctx, f.q.taskPrefix()+"a", "msg").Val()
	msgB := f.c.HGet(f.ctx, f.q.taskPrefix()+"b", "msg").Val()
	// b's worker comes back and extends its lease after chatq read it.
	f.must(f.c.ZAdd(f.ctx, f.q.key("lease"), redis.Z{Score: float64(now + 30), Member: "b"}).Err())
	before := f.contents()
	day := time.Now().UTC().Format("2006-01-02")
	keys := []string{f.q.key(stateActive), f.q.key("lease"), f.q.key(stateRetry), f.q.key(stateArchived),
		f.q.key("processed:" + day), f.q.key("failed:" + day), f.q.key("processed"), f.q.key("failed")}
	args := []any{f.q.taskPrefix(), now - 30, now, now + 100, now - 1000, maxArchiveSize, listReach, batch, "9223372036854775807",
		searchBudget, "a", msgA + "stale", "new", "retry", "b", msgB, "new", "retry"}
	v, err := recoverScript.Run(f.ctx, f.c, keys, args...).Result()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(v) != "[changed leased]" {
		t.Fatalf("codes %v", v)
	}
	if f.contents() != before {
		t.Fatal("a task left changed the data")
	}
}

// TestUndecodable: a task whose msg is not a TaskMessage is listed with
// why, not hidden, and Scan goes on.
func TestUndecodable(t *testing.T) {
	f := newFixture(t, "q")
	f.add(statePending, "good", &message{Type: "x"}, 0)
	f.add(statePending, "bad", &message{Type: "x"}, 0)
	f.must(f.c.HSet(f.ctx, f.q.taskPrefix()+"bad", "msg", "\x0a\x05a").Err())
	var got []queues.Job
	if err := f.q.Scan(f.ctx, queues.ScanOptions{}, func(p []queues.Job) error { got = append(got, p...); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "good" || got[1].ID != "bad" || got[1].Extra["msg_error"] == nil || got[1].State != queues.Ready {
		t.Fatalf("%+v", got)
	}
	j, err := f.q.Get(f.ctx, "bad")
	if err != nil || j.Extra["msg_error"] == nil {
		t.Fatalf("%+v %v", j, err)
	}
}

// TestSearchBudget: tasks far into long lists take several scripts (each
// compares at most searchBudget entries); all of them are done.
func TestSearchBudget(t *testing.T) {
	f := newFixture(t, "q")
	now := time.Now().Unix()
	p := f.c.Pipeline()
	var pending, active []any
	var leases []redis.Z
	var rmIDs, expired []string
	for i := range 3000 {
		id := fmt.Sprintf("p%04d", i)
		pending = append(pending, id)
		p.HSet(f.ctx, f.q.taskPrefix()+id, "msg", encode(&message{Type: "x", ID: id, Queue: "q"}), "state", "pending")
		aid := fmt.Sprintf("a%04d", i)
		active = append(active, aid)
		p.HSet(f.ctx, f.q.taskPrefix()+aid, "msg", encode(&message{Type: "x", ID: aid, Queue: "q", Retry: 1}), "state", "active")
		score := now + 30
		// 900 and more from the tail (LPUSH puts the first at the tail).
		if i >= 900 && i < 930 {
			rmIDs = append(rmIDs, id)
			expired = append(expired, aid)
			score = now - 60
		}
		leases = append(leases, redis.Z{Score: float64(score), Member: aid})
	}
	p.LPush(f.ctx, f.q.key(statePending), pending...)
	p.LPush(f.ctx, f.q.key(stateActive), active...)
	p.ZAdd(f.ctx, f.q.key("lease"), leases...)
	_, err := p.Exec(f.ctx)
	f.must(err)
	res, err := f.q.Remove(f.ctx, rmIDs, false)
	if err != nil || len(res.Done) != 30 || len(res.Skipped) != 0 {
		t.Fatalf("remove: %d done, skipped %v, %v", len(res.Done), res.Skipped, err)
	}
	if n := f.c.LLen(f.ctx, f.q.key(statePending)).Val(); n != 2970 {
		t.Fatalf("pending %d", n)
	}
	res, err = f.q.Recover(f.ctx, queues.RecoverOptions{})
	if err != nil || len(res.Done) != 30 || len(res.Skipped) != 0 {
		t.Fatalf("recover: %d done, skipped %v, %v", len(res.Done), res.Skipped, err)
	}
	slices.Sort(res.Done)
	if !slices.Equal(res.Done, expired) || f.c.LLen(f.ctx, f.q.key(stateActive)).Val() != 2970 {
		t.Fatalf("recovered %q", res.Done)
	}
}
