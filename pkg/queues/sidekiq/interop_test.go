package sidekiq_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/sidekiq"
	"github.com/redis/go-redis/v9"
)

// interopDir holds interop.rb (Sidekiq's client and API) and worker.rb
// (the job classes the real `sidekiq` executable runs).
var interopDir = filepath.Join("..", "..", "..", "testdata", "interop", "sidekiq")

// requireSidekiq skips t when Ruby's sidekiq gem or its executable is
// missing, or fails it under CHATQ_REQUIRE_SIDEKIQ=1.
func requireSidekiq(t *testing.T) {
	t.Helper()
	_, err := exec.LookPath("sidekiq")
	if err == nil {
		err = exec.Command("ruby", "-e", `require "sidekiq"; require "sidekiq/api"`).Run()
	}
	if err != nil {
		if os.Getenv("CHATQ_REQUIRE_SIDEKIQ") == "1" {
			t.Fatalf("CHATQ_REQUIRE_SIDEKIQ=1 but Sidekiq is not installed (apt-get install ruby-sidekiq): %v", err)
		}
		t.Skipf("Sidekiq not installed (apt-get install ruby-sidekiq): %v", err)
	}
}

// lib runs Sidekiq's own client, API and worker on one server.
type lib struct {
	t        *testing.T
	url, ran string
}

func (l *lib) env() []string {
	// RUBYOPT=-W0: ruby-redis 4.8's deprecation warnings are noise here.
	return append(os.Environ(), "CHATQ_SIDEKIQ_RAN="+l.ran, "REDIS_URL="+l.url, "RUBYOPT=-W0")
}

// run runs interop.rb and decodes its last line into v.
func (l *lib) run(v any, args ...string) {
	l.t.Helper()
	script, _ := filepath.Abs(filepath.Join(interopDir, "interop.rb"))
	cmd := exec.Command("ruby", append([]string{script, args[0], l.url}, args[1:]...)...)
	cmd.Env = l.env()
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		l.t.Fatalf("interop.rb %v: %v", args, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), v); err != nil {
		l.t.Fatalf("interop.rb %v printed %q: %v", args, out, err)
	}
}

// worker starts the `sidekiq` executable (concurrency 1) on queues chatq
// and other; it is stopped (TERM, then KILL) when t ends.
func (l *lib) worker() {
	l.t.Helper()
	dir, _ := filepath.Abs(interopDir)
	cmd := exec.Command("sidekiq", "-r", filepath.Join(dir, "worker.rb"), "-c", "1", "-q", "chatq", "-q", "other", "-t", "3")
	cmd.Dir = dir
	cmd.Env = l.env()
	logf, err := os.Create(filepath.Join(filepath.Dir(l.ran), "worker.log"))
	if err != nil {
		l.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		_ = logf.Close()
		if l.t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			l.t.Logf("worker log:\n%s", b)
		}
	})
}

type apiCounts struct {
	Queues map[string]map[string]int64 `json:"queues"`
	Stats  struct {
		Enqueued      int64 `json:"enqueued"`
		ScheduledSize int64 `json:"scheduled_size"`
		RetrySize     int64 `json:"retry_size"`
		DeadSize      int64 `json:"dead_size"`
	} `json:"stats"`
}

func (l *lib) counts() apiCounts {
	l.t.Helper()
	var c apiCounts
	l.run(&c, "counts", "chatq", "other")
	return c
}

type apiState struct {
	State      string   `json:"state"`
	Queue      string   `json:"queue"`
	RetryCount *float64 `json:"retry_count"`
}

func (l *lib) states(jids ...string) map[string]*apiState {
	l.t.Helper()
	var v struct {
		States map[string]*apiState `json:"states"`
	}
	l.run(&v, append([]string{"state"}, jids...)...)
	return v.States
}

// ran is the jids the worker ran, in order.
func (l *lib) ranJIDs() []string {
	l.t.Helper()
	f, err := os.Open(l.ran)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		l.t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			JID string `json:"jid"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			l.t.Fatalf("ran: %q: %v", sc.Text(), err)
		}
		out = append(out, r.JID)
	}
	return out
}

// waitFor polls cond until it holds, failing t after deadline.
func waitFor(t *testing.T, what string, deadline time.Duration, cond func() bool) {
	t.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("%s: not within %v", what, deadline)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// sameCounts fails t unless chatq's counts of both queues are what
// Sidekiq's API says (Queue#size, the sets' and WorkSet's entries of the
// queue) and the sets' sizes over all queues are Sidekiq::Stats'.
func sameCounts(t *testing.T, kind *sidekiq.Kind, l *lib) {
	t.Helper()
	api := l.counts()
	for _, name := range []string{"chatq", "other"} {
		q, err := kind.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		c, err := q.Counts(context.Background())
		if err != nil {
			t.Fatalf("counts %s: %v", name, err)
		}
		want := api.Queues[name]
		got := map[string]int64{"ready": *c.Ready, "delayed": *c.Delayed, "retry": *c.Retry, "dead": *c.Dead, "inflight": *c.Inflight}
		for k, w := range want {
			if got[k] != w {
				t.Errorf("counts %s: %s = %d, Sidekiq's API says %d (%v)", name, k, got[k], w, want)
			}
		}
		if c.Done != nil {
			t.Errorf("counts %s: done = %d, want nil", name, *c.Done)
		}
		s := api.Stats
		if c.Other["schedule_all"] != s.ScheduledSize || c.Other["retry_all"] != s.RetrySize || c.Other["dead_all"] != s.DeadSize {
			t.Errorf("counts %s: other %v, Sidekiq::Stats says %+v", name, c.Other, s)
		}
	}
}

// kindStates are Sidekiq's API's places by chatq's KindState.
var kindStates = map[string]string{"enqueued": "queue", "scheduled": "schedule", "retry": "retry", "dead": "dead", "busy": "busy"}

func sameStates(t *testing.T, q queues.Queue, l *lib, jids ...string) {
	t.Helper()
	api := l.states(jids...)
	for _, jid := range jids {
		j, err := q.Get(context.Background(), jid)
		a := api[jid]
		if a == nil || a.Queue != strings.TrimPrefix(q.Address(), "sidekiq:") {
			if !errors.Is(err, queues.ErrJobNotFound) {
				t.Errorf("get %s: %v, %v; Sidekiq's API has it at %+v", jid, j, err, a)
			}
			continue
		}
		if err != nil {
			t.Errorf("get %s: %v; Sidekiq's API has it in %s", jid, err, a.State)
			continue
		}
		if kindStates[j.KindState] != a.State {
			t.Errorf("get %s: %s, Sidekiq's API has it in %s", jid, j.KindState, a.State)
		}
	}
}

// shape is a job JSON's keys in order, with the retry_count and the
// kind of number enqueued_at is.
func shape(t *testing.T, raw string) string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not a JSON object: %q", raw)
	}
	var keys []string
	for dec.More() {
		k, _ := dec.Token()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		key := k.(string)
		switch key {
		case "retry_count":
			key += "=" + v.(json.Number).String()
		case "enqueued_at":
			if !strings.Contains(v.(json.Number).String(), ".") {
				key += "(integer)"
			}
		}
		keys = append(keys, key)
	}
	return strings.Join(keys, ",")
}

type fillJIDs struct {
	JIDs map[string]struct {
		Ready     []string `json:"ready"`
		Scheduled []string `json:"scheduled"`
		Killed    string   `json:"killed"`
		Fail      string   `json:"fail"`
		Dead      string   `json:"dead"`
	} `json:"jids"`
}

// TestInterop has Sidekiq's own client, API and worker fill every state of
// two queues, compares chatq's counts and states with the API's, checks
// each action through the API and that the worker runs what chatq
// retried and redrove, and never what it removed.
func TestInterop(t *testing.T) {
	requireSidekiq(t)
	ctx := context.Background()
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	dir := t.TempDir()
	release := filepath.Join(dir, "release")
	t.Cleanup(func() { _ = os.WriteFile(release, nil, 0o600) }) // lets the held job end before the worker stops
	l := &lib{t: t, url: srv.URL(), ran: filepath.Join(dir, "ran.jsonl")}
	kind := sidekiq.New(queues.Env{RDB: rdb})

	// The worker fails a job of each queue into the retry set and one into
	// the dead set (retry: 0), then holds a job of chatq in flight.
	l.worker()
	var failed fillJIDs
	l.run(&failed, "fail", "chatq", "other")
	waitFor(t, "the worker failing 4 jobs", 60*time.Second, func() bool {
		s := l.counts().Stats
		return s.RetrySize == 2 && s.DeadSize == 2
	})
	var hold struct {
		JID string `json:"jid"`
	}
	l.run(&hold, "hold", "chatq", release)
	waitFor(t, "the held job in the WorkSet", 30*time.Second, func() bool { return l.counts().Queues["chatq"]["inflight"] == 1 })
	var fill fillJIDs
	l.run(&fill, "fill", "chatq", "other")
	sameCounts(t, kind, l)
	if api := l.counts().Queues["chatq"]; api["ready"] != 3 || api["delayed"] != 2 || api["retry"] != 1 || api["dead"] != 2 || api["inflight"] != 1 {
		t.Fatalf("Sidekiq's API counts of chatq: %v (the fill went wrong)", api)
	}

	var found []string
	for cursor := uint64(0); ; {
		n, next, err := kind.Discover(ctx, cursor, 100)
		if err != nil {
			t.Fatal(err)
		}
		found = append(found, n...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	sort.Strings(found)
	if !slices.Equal(found, []string{"chatq", "other"}) {
		t.Errorf("discover: %v", found)
	}

	q, _ := kind.Open("chatq")
	c, o := fill.JIDs["chatq"], fill.JIDs["other"]
	fc, fo := failed.JIDs["chatq"], failed.JIDs["other"]
	all := append(append(append([]string{hold.JID, c.Killed, o.Killed, fc.Fail, fc.Dead, fo.Fail, fo.Dead}, c.Ready...), c.Scheduled...), o.Scheduled...)
	sameStates(t, q, l, all...)
	j, err := q.Get(ctx, fc.Fail)
	if err != nil {
		t.Fatal(err)
	}
	if j.Name != "FailJob" || j.Attempts != 1 || !strings.HasPrefix(j.Error, "ArgumentError: chatq interop failure") ||
		!strings.Contains(j.Stack, "worker.rb") || j.Due.Before(time.Now().Add(50*time.Minute)) || j.Extra["failed_at"] == nil {
		t.Errorf("the failed job: %+v", j)
	}

	// Retry: the retry set's job (retry_count one less, as SortedEntry#retry)
	// and a scheduled one (as #add_to_queue) go to the queue; other's job,
	// a ready one and the one in flight are skipped.
	res, err := q.(queues.Retrier).Retry(ctx, []string{fc.Fail, c.Scheduled[0], fo.Fail, c.Ready[0], hold.JID})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Done, []string{fc.Fail, c.Scheduled[0]}) || len(res.Skipped) != 3 {
		t.Errorf("retry: %+v", res)
	}
	st := l.states(fc.Fail, c.Scheduled[0], fo.Fail)
	if s := st[fc.Fail]; s == nil || s.State != "queue" || s.Queue != "chatq" || s.RetryCount == nil || *s.RetryCount != -1 {
		t.Errorf("the retried job, by Sidekiq's API: %+v", s)
	}
	if s := st[c.Scheduled[0]]; s == nil || s.State != "queue" || s.RetryCount != nil {
		t.Errorf("the retried scheduled job, by Sidekiq's API: %+v", s)
	}
	if s := st[fo.Fail]; s == nil || s.State != "retry" || s.Queue != "other" {
		t.Errorf("other's job, by Sidekiq's API: %+v", s)
	}
	sameCounts(t, kind, l)

	// What chatq pushed is what Sidekiq's own retry pushes: the same keys
	// in the same order, the same retry_count, enqueued_at a float.
	var retried struct {
		Retried bool `json:"retried"`
	}
	l.run(&retried, "retry", fo.Fail)
	if !retried.Retried {
		t.Fatal("Sidekiq's API did not retry other's job")
	}
	sidekiqPushed, err := rdb.LIndex(ctx, "queue:other", 0).Result()
	if err != nil {
		t.Fatal(err)
	}
	chatqPushed := ""
	for _, raw := range rdb.LRange(ctx, "queue:chatq", 0, -1).Val() {
		if strings.Contains(raw, fc.Fail) {
			chatqPushed = raw
		}
	}
	t.Logf("pushed: %s", shape(t, chatqPushed))
	if a, b := shape(t, chatqPushed), shape(t, sidekiqPushed); a != b {
		t.Errorf("chatq pushed %s\nSidekiq pushed %s", a, b)
	}

	// Remove: a ready job, a scheduled one; the job in flight is left.
	res, err = q.(queues.Remover).Remove(ctx, []string{c.Ready[1], c.Scheduled[1], hold.JID}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Done, []string{c.Ready[1], c.Scheduled[1]}) || len(res.Skipped) != 1 {
		t.Errorf("remove: %+v", res)
	}
	// Sidekiq's WorkSet is what the worker's heartbeat last wrote (every
	// few seconds): on a loaded machine the held job can be missing from
	// one read, so the busy state is polled for with a deadline.
	st = l.states(c.Ready[1], c.Scheduled[1], hold.JID)
	if st[c.Ready[1]] != nil || st[c.Scheduled[1]] != nil {
		t.Errorf("after remove, Sidekiq's API: %v %v", st[c.Ready[1]], st[c.Scheduled[1]])
	}
	waitFor(t, "the held job busy in Sidekiq's WorkSet after remove", 30*time.Second, func() bool {
		st := l.states(hold.JID)
		return st[hold.JID] != nil && st[hold.JID].State == "busy"
	})

	// Redrive: chatq's two dead jobs (the worker's and DeadSet#kill's) go
	// back; other's stay dead.
	res, err = q.(queues.Redriver).Redrive(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(res.Done)
	want := []string{c.Killed, fc.Dead}
	sort.Strings(want)
	if !slices.Equal(res.Done, want) {
		t.Errorf("redrive: %+v, want %v", res, want)
	}
	sameCounts(t, kind, l)
	if api := l.counts(); api.Queues["chatq"]["dead"] != 0 || api.Queues["other"]["dead"] != 2 || api.Queues["chatq"]["ready"] != 6 {
		t.Errorf("after redrive, Sidekiq's API: %v", api.Queues)
	}
	sameStates(t, q, l, all...)

	// The worker, released, runs what chatq retried and redrove, and never
	// what it removed.
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, jid := range []string{fc.Fail, c.Scheduled[0], c.Killed, fc.Dead} {
		waitFor(t, "the worker running "+jid, 60*time.Second, func() bool { return slices.Contains(l.ranJIDs(), jid) })
	}
	waitFor(t, "both queues drained, by Sidekiq's API", 60*time.Second, func() bool {
		api := l.counts().Queues
		return api["chatq"]["ready"] == 0 && api["other"]["ready"] == 0 && api["chatq"]["inflight"] == 0
	})
	ran := l.ranJIDs()
	for _, jid := range []string{c.Ready[1], c.Scheduled[1], c.Scheduled[0]} {
		n := 0
		for _, r := range ran {
			if r == jid {
				n++
			}
		}
		if want := map[bool]int{true: 1, false: 0}[jid == c.Scheduled[0]]; n != want {
			t.Errorf("the worker ran %s %d times, want %d", jid, n, want)
		}
	}
	// The retried FailJob fails again into retry (retry_count 0: chatq's
	// retry did not count against it), the redriven DeadJob dies again:
	// Sidekiq's own retry handling takes them. A job's end shows in the
	// work hashes at the process's next heartbeat.
	waitFor(t, "the jobs that ran again back in retry and dead, nothing in flight", 60*time.Second, func() bool {
		st := l.states(fc.Fail, fc.Dead, fo.Fail)
		f, d, o := st[fc.Fail], st[fc.Dead], st[fo.Fail]
		return f != nil && f.State == "retry" && f.RetryCount != nil && *f.RetryCount == 0 &&
			d != nil && d.State == "dead" && o != nil && o.State == "retry" &&
			l.counts().Queues["other"]["inflight"] == 0 && l.counts().Queues["chatq"]["inflight"] == 0
	})
	sameCounts(t, kind, l)
}
