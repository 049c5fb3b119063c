package interop

import (
	"bufio"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chatq-dev/chatq/pkg/queues"
	chatqasynq "github.com/chatq-dev/chatq/pkg/queues/asynq"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"google.golang.org/protobuf/encoding/protowire"
)

// childEnv, when set (to "addr db"), makes the test binary an asynq
// server process of its own, which the test kills hard.
const childEnv = "CHATQ_INTEROP_ASYNQ_CHILD"

func TestMain(m *testing.M) {
	if spec := os.Getenv(childEnv); spec != "" {
		child(spec)
		return
	}
	os.Exit(m.Run())
}

// child runs an asynq server on queue "r" whose handler prints the id of
// each task it starts and never returns, until the process is killed.
func child(spec string) {
	addr, dbs, _ := strings.Cut(spec, " ")
	db, _ := strconv.Atoi(dbs)
	srv := asynq.NewServer(asynq.RedisClientOpt{Addr: addr, DB: db}, asynq.Config{
		Concurrency: 4, Queues: map[string]int{"r": 1}, LogLevel: asynq.ErrorLevel,
	})
	var mu sync.Mutex
	err := srv.Run(asynq.HandlerFunc(func(ctx context.Context, t *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		mu.Lock()
		fmt.Println("started", id)
		mu.Unlock()
		select {}
	}))
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

// server is a Redis for the test alone: asynq's keys have no prefix, so
// it cannot share a database. A private redis-server when there is one;
// else database 9 of CHATQ_TEST_REDIS_URL's server, flushed.
func server(t *testing.T) *redis.Options {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err == nil {
		return startRedis(t)
	}
	url := os.Getenv("CHATQ_TEST_REDIS_URL")
	if url == "" {
		if os.Getenv("CHATQ_REQUIRE_REDIS") == "1" {
			t.Fatal("CHATQ_REQUIRE_REDIS=1 but there is no redis-server and CHATQ_TEST_REDIS_URL is not set")
		}
		t.Skip("no redis-server and no CHATQ_TEST_REDIS_URL")
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opt.DB = 9
	c := redis.NewClient(opt)
	defer c.Close()
	if err := c.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return opt
}

// startRedis starts redis-server on a free loopback port (in CI_PORTS,
// LO-HI, when set), stopped when t ends.
func startRedis(t *testing.T) *redis.Options {
	t.Helper()
	port := freePort(t)
	cmd := exec.Command("redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(port), "--save", "",
		"--appendonly", "no", "--dir", t.TempDir())
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	opt := &redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)}
	c := redis.NewClient(opt)
	defer c.Close()
	eventually(t, "redis-server answers", func() bool { return c.Ping(context.Background()).Err() == nil })
	return opt
}

func freePort(t *testing.T) int {
	t.Helper()
	lo, hi := 0, 0
	if l, h, ok := strings.Cut(os.Getenv("CI_PORTS"), "-"); ok {
		lo, _ = strconv.Atoi(l)
		hi, _ = strconv.Atoi(h)
	}
	for range 1000 {
		port := 0
		if lo > 0 && hi >= lo {
			port = lo + rand.IntN(hi-lo+1)
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			continue
		}
		port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		return port
	}
	t.Fatal("no free port")
	return 0
}

// eventually polls cond until it holds, failing t after 30 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// recorder counts, by task id, the runs asynq's server started.
type recorder struct {
	mu   sync.Mutex
	runs map[string]int
}

func (r *recorder) add(ctx context.Context) {
	id, _ := asynq.GetTaskID(ctx)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.runs[id]++
}

func (r *recorder) count(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.runs[id]
}

// startServer runs asynq's server on queues with a handler per task type:
// "ok" succeeds, "fail" fails (retried after an hour), "block" runs until
// the server stops. It is stopped when t ends.
func startServer(t *testing.T, opt asynq.RedisClientOpt, rec *recorder, queues ...string) {
	t.Helper()
	qs := map[string]int{}
	for _, q := range queues {
		qs[q] = 1
	}
	srv := asynq.NewServer(opt, asynq.Config{
		Concurrency: 20, Queues: qs, LogLevel: asynq.ErrorLevel, ShutdownTimeout: time.Second,
		DelayedTaskCheckInterval: 200 * time.Millisecond,
		RetryDelayFunc:           func(int, error, *asynq.Task) time.Duration { return time.Hour },
	})
	mux := asynq.NewServeMux()
	mux.HandleFunc("ok", func(ctx context.Context, _ *asynq.Task) error { rec.add(ctx); return nil })
	mux.HandleFunc("fail", func(ctx context.Context, _ *asynq.Task) error { rec.add(ctx); return errors.New("boom") })
	mux.HandleFunc("block", func(ctx context.Context, _ *asynq.Task) error { rec.add(ctx); <-ctx.Done(); return ctx.Err() })
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
}

// env is what every step uses.
type env struct {
	t    *testing.T
	ctx  context.Context
	opt  asynq.RedisClientOpt
	rdb  *redis.Client
	cl   *asynq.Client
	insp *asynq.Inspector
	kind *chatqasynq.Kind
}

func newEnv(t *testing.T) *env {
	o := server(t)
	e := &env{t: t, ctx: context.Background(), opt: asynq.RedisClientOpt{Addr: o.Addr, DB: o.DB, Password: o.Password, Username: o.Username}}
	e.rdb = redis.NewClient(o)
	e.cl = asynq.NewClient(e.opt)
	e.insp = asynq.NewInspector(e.opt)
	t.Cleanup(func() { e.cl.Close(); e.insp.Close(); e.rdb.Close() })
	e.kind = chatqasynq.New(queues.Env{RDB: e.rdb})
	return e
}

func (e *env) enqueue(typ string, payload []byte, opts ...asynq.Option) string {
	e.t.Helper()
	info, err := e.cl.Enqueue(asynq.NewTask(typ, payload), opts...)
	if err != nil {
		e.t.Fatal(err)
	}
	return info.ID
}

func (e *env) queue(name string) *chatqasynq.Queue {
	e.t.Helper()
	q, err := e.kind.Open(name)
	if err != nil {
		e.t.Fatal(err)
	}
	return q.(*chatqasynq.Queue)
}

func (e *env) info(q string) *asynq.QueueInfo {
	e.t.Helper()
	info, err := e.insp.GetQueueInfo(q)
	if err != nil {
		e.t.Fatal(err)
	}
	return info
}

func (e *env) state(q, id string) string {
	e.t.Helper()
	ti, err := e.insp.GetTaskInfo(q, id)
	if errors.Is(err, asynq.ErrTaskNotFound) {
		return "gone"
	}
	if err != nil {
		e.t.Fatal(err)
	}
	return ti.State.String()
}

// compareCounts checks chatq's counts against GetQueueInfo's, exactly.
func (e *env) compareCounts(name string) {
	e.t.Helper()
	c, err := e.queue(name).Counts(e.ctx)
	if err != nil {
		e.t.Fatal(err)
	}
	info := e.info(name)
	got := []int64{*c.Ready, *c.Inflight, *c.Delayed, *c.Retry, *c.Dead, *c.Done}
	want := []int64{int64(info.Pending), int64(info.Active), int64(info.Scheduled), int64(info.Retry), int64(info.Archived), int64(info.Completed)}
	if !slices.Equal(got, want) || *c.Paused != info.Paused {
		e.t.Fatalf("chatq counts (pending active scheduled retry archived completed) %v paused %v; asynq %v paused %v",
			got, *c.Paused, want, info.Paused)
	}
	if info.Pending > 0 {
		if c.OldestReady == nil {
			e.t.Fatalf("no oldest ready; asynq's latency %v", info.Latency)
		}
		if d := *c.OldestReady - info.Latency; d < -2*time.Second || d > 2*time.Second {
			e.t.Fatalf("oldest ready %v, asynq's latency %v", *c.OldestReady, info.Latency)
		}
	}
}

// compareListings checks chatq's Scan of each state against the
// Inspector's listing of it, task by task, in order.
func (e *env) compareListings(name string) {
	e.t.Helper()
	q := e.queue(name)
	lists := map[string]func(string, ...asynq.ListOption) ([]*asynq.TaskInfo, error){
		queues.Ready: e.insp.ListPendingTasks, queues.Delayed: e.insp.ListScheduledTasks,
		queues.Inflight: e.insp.ListActiveTasks, queues.Retry: e.insp.ListRetryTasks,
		queues.Dead: e.insp.ListArchivedTasks, queues.Done: e.insp.ListCompletedTasks,
	}
	for _, s := range queues.States {
		want, err := lists[s](name, asynq.PageSize(1000))
		if err != nil {
			e.t.Fatal(err)
		}
		var got []queues.Job
		err = q.Scan(e.ctx, queues.ScanOptions{State: s, Page: 2}, func(p []queues.Job) error { got = append(got, p...); return nil })
		if err != nil {
			e.t.Fatal(err)
		}
		if len(got) != len(want) {
			e.t.Fatalf("%s: chatq lists %d tasks, asynq %d", s, len(got), len(want))
		}
		for i, w := range want {
			e.compareJob(s, &got[i], w)
			g, err := q.Get(e.ctx, w.ID)
			if err != nil {
				e.t.Fatal(err)
			}
			e.compareJob(s, g, w)
		}
	}
}

func (e *env) compareJob(state string, g *queues.Job, w *asynq.TaskInfo) {
	e.t.Helper()
	data := string(w.Payload)
	if !utf8.Valid(w.Payload) {
		data = base64.StdEncoding.EncodeToString(w.Payload)
	}
	bad := func(what string, got, want any) {
		e.t.Helper()
		e.t.Fatalf("%s task %s: %s: chatq %v, asynq %v", state, w.ID, what, got, want)
	}
	switch {
	case g.ID != w.ID:
		bad("id", g.ID, w.ID)
	case g.State != state || g.KindState != w.State.String():
		bad("state", g.State+"/"+g.KindState, w.State.String())
	case g.Name != w.Type:
		bad("type", g.Name, w.Type)
	case g.Data != data:
		bad("payload", g.Data, data)
	case g.Attempts != int64(w.Retried):
		bad("retried", g.Attempts, w.Retried)
	case g.Error != w.LastErr:
		bad("last error", g.Error, w.LastErr)
	case g.Extra["max_retry"] != int64(w.MaxRetry):
		bad("max retry", g.Extra["max_retry"], w.MaxRetry)
	case (state == queues.Delayed || state == queues.Retry) && !g.Due.Equal(w.NextProcessAt):
		bad("due", g.Due, w.NextProcessAt)
	case state == queues.Done && !g.Finished.Equal(w.CompletedAt):
		bad("completed at", g.Finished, w.CompletedAt)
	case state == queues.Dead && !w.LastFailedAt.IsZero() && !g.Finished.Equal(w.LastFailedAt):
		bad("last failed at", g.Finished, w.LastFailedAt)
	case w.Retention != 0 && g.Extra["retention"] != int64(w.Retention/time.Second):
		bad("retention", g.Extra["retention"], w.Retention)
	}
}

// TestInterop fills every state with asynq's own client and server,
// compares, then does each chatq action and checks asynq agrees.
func TestInterop(t *testing.T) {
	e := newEnv(t)
	rec := &recorder{runs: map[string]int{}}
	const q = "q"

	// Every state, by asynq's own client and server.
	var completed, retrying, archived, active []string
	for range 2 {
		completed = append(completed, e.enqueue("ok", []byte(`{"n":1}`), asynq.Queue(q), asynq.Retention(time.Hour)))
		retrying = append(retrying, e.enqueue("fail", []byte(`{"n":2}`), asynq.Queue(q), asynq.MaxRetry(5)))
		active = append(active, e.enqueue("block", nil, asynq.Queue(q)))
	}
	for range 4 {
		archived = append(archived, e.enqueue("fail", []byte("x"), asynq.Queue(q), asynq.MaxRetry(0)))
	}
	startServer(t, e.opt, rec, q)
	eventually(t, "asynq's server settled every task", func() bool {
		i := e.info(q)
		return i.Completed == 2 && i.Retry == 2 && i.Archived == 4 && i.Active == 2 && i.Pending == 0
	})
	if err := e.insp.PauseQueue(q); err != nil {
		t.Fatal(err)
	}
	pending := []string{
		e.enqueue("ok", []byte(`{"to":"ann"}`), asynq.Queue(q), asynq.Timeout(time.Minute)),
		e.enqueue("ok", []byte{0xff, 0, 1}, asynq.Queue(q), asynq.Unique(time.Hour)),
		e.enqueue("ok", []byte("plain"), asynq.Queue(q), asynq.Deadline(time.Now().Add(time.Hour))),
	}
	scheduled := e.enqueue("ok", []byte(`{"later":true}`), asynq.Queue(q), asynq.ProcessIn(time.Hour))

	t.Run("discover", func(t *testing.T) {
		names, _, err := e.kind.Discover(e.ctx, 0, 100)
		if err != nil || !slices.Contains(names, q) {
			t.Fatalf("discovered %q %v", names, err)
		}
		// With a prefix, nothing: asynq's keys have none.
		if names, _, _ := chatqasynq.New(queues.Env{RDB: e.rdb, Prefix: "x:"}).Discover(e.ctx, 0, 100); len(names) != 0 {
			t.Fatalf("with a prefix: %q", names)
		}
	})
	t.Run("counts", func(t *testing.T) { e.compareCounts(q) })
	t.Run("listings", func(t *testing.T) { e.compareListings(q) })

	t.Run("retry", func(t *testing.T) {
		res, err := e.queue(q).Retry(e.ctx, []string{scheduled, retrying[0], archived[0], pending[0], active[0], completed[0]})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Done, []string{scheduled, retrying[0], archived[0]}) || len(res.Skipped) != 3 {
			t.Fatalf("done %q skipped %v", res.Done, res.Skipped)
		}
		for _, id := range res.Done {
			if s := e.state(q, id); s != "pending" {
				t.Fatalf("%s is %s for asynq", id, s)
			}
		}
		for id, s := range map[string]string{pending[0]: "pending", active[0]: "active", completed[0]: "completed"} {
			if got := e.state(q, id); got != s {
				t.Fatalf("%s: %s, want %s", id, got, s)
			}
		}
		e.compareCounts(q)
	})

	t.Run("remove", func(t *testing.T) {
		res, err := e.queue(q).Remove(e.ctx, []string{pending[1], completed[1], retrying[1], active[1]}, false)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Done, []string{pending[1], completed[1], retrying[1]}) || res.Skipped[active[1]] == "" {
			t.Fatalf("done %q skipped %v", res.Done, res.Skipped)
		}
		// Forced, a task whose worker still extends its lease stays.
		if res, err := e.queue(q).Remove(e.ctx, []string{active[1]}, true); err != nil || len(res.Done) != 0 {
			t.Fatalf("forced removal of a live task: %+v %v", res, err)
		}
		for _, id := range []string{pending[1], completed[1], retrying[1]} {
			if s := e.state(q, id); s != "gone" {
				t.Fatalf("%s is %s for asynq", id, s)
			}
		}
		if s := e.state(q, active[1]); s != "active" {
			t.Fatalf("%s is %s", active[1], s)
		}
		// The uniqueness lock went with the task: asynq takes the same task again.
		if _, err := e.cl.Enqueue(asynq.NewTask("ok", []byte{0xff, 0, 1}), asynq.Queue(q), asynq.Unique(time.Hour)); err != nil {
			t.Fatalf("enqueue after removing the unique task: %v", err)
		}
		e.compareCounts(q)
		e.compareListings(q)
	})

	t.Run("redrive", func(t *testing.T) {
		res, err := e.queue(q).Redrive(e.ctx, 2)
		if err != nil || len(res.Done) != 2 {
			t.Fatalf("%+v %v", res, err)
		}
		res2, err := e.queue(q).Redrive(e.ctx, 0)
		if err != nil || len(res2.Done) != 1 {
			t.Fatalf("%+v %v", res2, err)
		}
		for _, id := range append(res.Done, res2.Done...) {
			if s := e.state(q, id); s != "pending" {
				t.Fatalf("%s is %s for asynq", id, s)
			}
		}
		if i := e.info(q); i.Archived != 0 {
			t.Fatalf("asynq has %d archived", i.Archived)
		}
		e.compareCounts(q)
	})

	t.Run("pause", func(t *testing.T) {
		if err := e.queue(q).Resume(e.ctx); err != nil {
			t.Fatal(err)
		}
		if e.info(q).Paused {
			t.Fatal("asynq sees the queue paused after Resume")
		}
		// asynq's server runs what chatq ran again and redrove.
		ran := append([]string{scheduled, retrying[0]}, archived...)
		for _, id := range ran {
			eventually(t, "asynq's server ran "+id+" again", func() bool { return rec.count(id) >= 2 || (id == scheduled && rec.count(id) == 1) })
		}
		if err := e.queue(q).Pause(e.ctx); err != nil {
			t.Fatal(err)
		}
		if !e.info(q).Paused {
			t.Fatal("asynq does not see the queue paused")
		}
		id := e.enqueue("ok", nil, asynq.Queue(q))
		if err := e.queue(q).Resume(e.ctx); err != nil {
			t.Fatal(err)
		}
		eventually(t, "asynq's server ran the task enqueued while paused", func() bool { return rec.count(id) == 1 })
	})

	t.Run("recover", func(t *testing.T) { testRecover(t, e) })
}

// testRecover: an asynq server killed hard leaves its tasks active; once
// their lease expired, chatq's Recover moves two of them as asynq's
// recoverer does, and asynq's own recoverer (in a new server) moves their
// twins: the twins' messages are the same bytes but for id and time, and
// the new server runs the task chatq retried.
func testRecover(t *testing.T, e *env) {
	const q = "r"
	retried := e.enqueue("ok", []byte(`{"r":1}`), asynq.Queue(q), asynq.MaxRetry(3), asynq.Timeout(time.Hour))
	spent := e.enqueue("ok", []byte(`{"r":2}`), asynq.Queue(q), asynq.MaxRetry(0))
	twinRetried := e.enqueue("ok", []byte(`{"r":1}`), asynq.Queue(q), asynq.MaxRetry(3), asynq.Timeout(time.Hour))
	twinSpent := e.enqueue("ok", []byte(`{"r":2}`), asynq.Queue(q), asynq.MaxRetry(0))
	all := []string{retried, spent, twinRetried, twinSpent}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+e.opt.Addr+" "+strconv.Itoa(e.opt.DB))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	started := map[string]bool{}
	lines := bufio.NewScanner(out)
	deadline := time.AfterFunc(30*time.Second, func() { cmd.Process.Kill() })
	for len(started) < len(all) && lines.Scan() {
		if id, ok := strings.CutPrefix(lines.Text(), "started "); ok {
			started[id] = true
		}
	}
	deadline.Stop()
	for _, id := range all {
		if !started[id] {
			t.Fatalf("the child server started %v, not %s", started, id)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	// Nothing extends the leases now. asynq's lease is 30 s (a constant,
	// rdb.LeaseDuration) and its recoverer waits 30 s more: rather than
	// wait a minute, the test moves the leases' expiry a minute back, as
	// the clock would.
	q2 := e.queue(q)
	if res, err := q2.Recover(e.ctx, queues.RecoverOptions{}); err != nil || len(res.Done) != 0 {
		t.Fatalf("recover before the leases expired: %+v %v", res, err)
	}
	past := float64(time.Now().Add(-time.Minute).Unix())
	var zs []redis.Z
	for _, id := range all {
		zs = append(zs, redis.Z{Score: past, Member: id})
	}
	if err := e.rdb.ZAddXX(e.ctx, "asynq:{r}:lease", zs...).Err(); err != nil {
		t.Fatal(err)
	}
	c, err := q2.Counts(e.ctx)
	if err != nil || c.Other["lease_expired"] != 4 {
		t.Fatalf("counts %+v %v", c, err)
	}
	e.compareCounts(q)
	res, err := q2.Recover(e.ctx, queues.RecoverOptions{IDs: []string{retried, spent}})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(res.Done)
	want := []string{retried, spent}
	slices.Sort(want)
	if !slices.Equal(res.Done, want) {
		t.Fatalf("recovered %q skipped %v", res.Done, res.Skipped)
	}
	check := func(id, state string, retried int) *asynq.TaskInfo {
		t.Helper()
		ti, err := e.insp.GetTaskInfo(q, id)
		if err != nil {
			t.Fatal(err)
		}
		if ti.State.String() != state || ti.Retried != retried || ti.LastErr != "asynq: task lease expired" ||
			time.Since(ti.LastFailedAt) > time.Minute {
			t.Fatalf("%s for asynq: state %s retried %d error %q failed at %v", id, ti.State, ti.Retried, ti.LastErr, ti.LastFailedAt)
		}
		return ti
	}
	// What chatq wrote, kept before a server runs the retried task.
	mine := map[string]string{}
	for id, ti := range map[string]*asynq.TaskInfo{retried: check(retried, "retry", 1), spent: check(spent, "archived", 0)} {
		mine[id] = strings.Replace(e.rdb.HGet(e.ctx, "asynq:{r}:t:"+id, "msg").Val(), lastFailed(ti.LastFailedAt), "<failed at>", 1)
	}
	i := e.info(q)
	if i.Active != 2 || i.Failed != 2 || i.Processed != 2 {
		t.Fatalf("asynq's queue after recover: active %d processed %d failed %d", i.Active, i.Processed, i.Failed)
	}
	e.compareCounts(q)
	e.compareListings(q)

	// A new asynq server: its recoverer takes the twins back at once (its
	// retry delay is an hour, so the twin stays in retry), and it runs the
	// task chatq made due.
	rec := &recorder{runs: map[string]int{}}
	startServer(t, e.opt, rec, q)
	eventually(t, "asynq's recoverer took the twins back", func() bool {
		return e.state(q, twinRetried) == "retry" && e.state(q, twinSpent) == "archived"
	})
	twins := map[string]*asynq.TaskInfo{twinRetried: check(twinRetried, "retry", 1), twinSpent: check(twinSpent, "archived", 0)}
	for id, twin := range map[string]string{retried: twinRetried, spent: twinSpent} {
		theirs := e.rdb.HGet(e.ctx, "asynq:{r}:t:"+twin, "msg").Val()
		theirs = strings.Replace(theirs, lastFailed(twins[twin].LastFailedAt), "<failed at>", 1)
		if got := strings.Replace(mine[id], id, twin, 1); got != theirs {
			t.Fatalf("chatq wrote %s's message as\n%q\nasynq its twin's as\n%q", id, got, theirs)
		}
	}
	eventually(t, "a new asynq server ran the recovered task", func() bool { return rec.count(retried) == 1 })
	if e.state(q, retried) != "gone" || rec.count(spent) != 0 || rec.count(twinRetried) != 0 {
		t.Fatalf("after the run: %s is %s; the archived one ran %d times, the twin in retry %d", retried,
			e.state(q, retried), rec.count(spent), rec.count(twinRetried))
	}
	if i := e.info(q); i.Failed != 4 || i.Processed != 5 {
		t.Fatalf("asynq's counters: processed %d failed %d", i.Processed, i.Failed)
	}
}

// lastFailed is the encoded last_failed_at field (11, varint) of t.
func lastFailed(t time.Time) string {
	return string(protowire.AppendVarint(protowire.AppendTag(nil, 11, protowire.VarintType), uint64(t.Unix())))
}
