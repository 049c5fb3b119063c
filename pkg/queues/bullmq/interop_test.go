package bullmq_test

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

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/bullmq"
	"github.com/redis/go-redis/v9"
)

// interopDir holds bullmq5/ and bullmq6/ (npm ci there installs BullMQ)
// and bullmq/interop.js, which drives either.
var interopDir = filepath.Join("..", "..", "..", "testdata", "interop")

// versions are the installed BullMQ versions' directories under
// interopDir.
var versions = []string{"bullmq5", "bullmq6"}

// lib runs BullMQ's own Queue and Worker (interop.js) of one version on
// one queue.
type lib struct {
	t                       *testing.T
	dir, url, prefix, queue string
}

// requireLib skips t when dir's node_modules (or node) is missing, or
// fails it under CHATQ_REQUIRE_BULLMQ=1.
func requireLib(t *testing.T, dir string) {
	t.Helper()
	_, err := os.Stat(filepath.Join(interopDir, dir, "node_modules", "bullmq", "package.json"))
	if err == nil {
		_, err = exec.LookPath("node")
	}
	if err != nil {
		if os.Getenv("CHATQ_REQUIRE_BULLMQ") == "1" {
			t.Fatalf("CHATQ_REQUIRE_BULLMQ=1 but %s is not installed (npm ci in testdata/interop/%s): %v", dir, dir, err)
		}
		t.Skipf("%s not installed (npm ci in testdata/interop/%s)", dir, dir)
	}
}

func (l *lib) command(args ...string) *exec.Cmd {
	script, _ := filepath.Abs(filepath.Join(interopDir, "bullmq", "interop.js"))
	modules, _ := filepath.Abs(filepath.Join(interopDir, l.dir, "node_modules"))
	cmd := exec.Command("node", append([]string{script, args[0], l.url, l.prefix, l.queue}, args[1:]...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	cmd.Stderr = os.Stderr
	return cmd
}

// run runs one command and decodes its last line into v.
func (l *lib) run(v any, args ...string) {
	l.t.Helper()
	out, err := l.command(args...).Output()
	if err != nil {
		l.t.Fatalf("interop.js %v: %v", args, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), v); err != nil {
		l.t.Fatalf("interop.js %v printed %q: %v", args, out, err)
	}
}

type libCounts struct {
	Counts map[string]int64 `json:"counts"`
	Paused bool             `json:"paused"`
}

func (l *lib) counts() libCounts {
	l.t.Helper()
	var c libCounts
	l.run(&c, "counts")
	return c
}

func (l *lib) states(ids ...string) map[string]*string {
	l.t.Helper()
	var v struct {
		States map[string]*string `json:"states"`
	}
	l.run(&v, append([]string{"state"}, ids...)...)
	return v.States
}

func (l *lib) state(id string) string {
	l.t.Helper()
	s := l.states(id)[id]
	if s == nil {
		return "<none>"
	}
	return *s
}

// hold starts a worker that takes one job and never finishes it; it
// returns the job's id and the worker's process, killed when t ends.
func (l *lib) hold(lockMs string) (string, *exec.Cmd) {
	l.t.Helper()
	cmd := l.command("hold", lockMs)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		l.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	got := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var v struct {
				Active string `json:"active"`
			}
			if json.Unmarshal(sc.Bytes(), &v) == nil && v.Active != "" {
				got <- v.Active
				return
			}
		}
		close(got)
	}()
	select {
	case id, ok := <-got:
		if !ok {
			l.t.Fatal("hold: the worker ended before taking a job")
		}
		return id, cmd
	case <-time.After(30 * time.Second):
		l.t.Fatal("hold: no job taken in 30s")
	}
	return "", nil
}

// work has BullMQ's own worker process the jobs ids (and whatever else
// is ready), and returns the ids it processed.
func (l *lib) work(ids ...string) []string {
	l.t.Helper()
	var v struct {
		Processed []string `json:"processed"`
	}
	l.run(&v, append([]string{"work"}, ids...)...)
	return v.Processed
}

type fillResult struct {
	Version string           `json:"version"`
	Counts  map[string]int64 `json:"counts"`
	IDs     struct {
		Failed      []string `json:"failed"`
		Completed   []string `json:"completed"`
		Hold        string   `json:"hold"`
		Wait        []string `json:"wait"`
		Prioritized []string `json:"prioritized"`
		Delayed     []string `json:"delayed"`
		Parent      string   `json:"parent"`
		Child       string   `json:"child"`
	} `json:"ids"`
}

// sameCounts fails t unless chatq's counts are BullMQ's getJobCounts().
func sameCounts(t *testing.T, q queues.Queue, l *lib) {
	t.Helper()
	lc := l.counts()
	c, err := q.Counts(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b := lc.Counts
	want := map[string]int64{
		"ready":            b["waiting"] + b["paused"] + b["prioritized"],
		"delayed":          b["delayed"],
		"inflight":         b["active"],
		"dead":             b["failed"],
		"done":             b["completed"],
		"prioritized":      b["prioritized"],
		"paused":           b["paused"],
		"waiting-children": b["waiting-children"],
	}
	got := map[string]int64{
		"ready": *c.Ready, "delayed": *c.Delayed, "inflight": *c.Inflight, "dead": *c.Dead, "done": *c.Done,
		"prioritized": c.Other["prioritized"], "paused": c.Other["paused"], "waiting-children": c.Other["waiting-children"],
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("counts: %s = %d, BullMQ's getJobCounts %v says %d", k, got[k], b, w)
		}
	}
	if c.Retry != nil {
		t.Errorf("counts: retry = %d, want nil (BullMQ has no retry state)", *c.Retry)
	}
	if c.Paused == nil || *c.Paused != lc.Paused {
		t.Errorf("counts: paused = %v, BullMQ's isPaused() says %v", c.Paused, lc.Paused)
	}
}

// kindStateOf is BullMQ's getState() name of chatq's KindState.
func sameState(t *testing.T, q queues.Queue, l *lib, ids ...string) {
	t.Helper()
	lib := l.states(ids...)
	for _, id := range ids {
		j, err := q.Get(context.Background(), id)
		if lib[id] == nil {
			if !errors.Is(err, queues.ErrJobNotFound) {
				t.Errorf("get %s: %v, %v; BullMQ has no such job", id, j, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("get %s: %v; BullMQ says %s", id, err, *lib[id])
			continue
		}
		if j.KindState != *lib[id] {
			t.Errorf("get %s: state %s (%s), BullMQ's getState says %s", id, j.KindState, j.State, *lib[id])
		}
	}
}

func TestInterop(t *testing.T) {
	for _, dir := range versions {
		t.Run(dir, func(t *testing.T) {
			requireLib(t, dir)
			interop(t, dir)
		})
	}
}

func interop(t *testing.T, dir string) {
	ctx := context.Background()
	srv := redistest.StartServer(t)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { _ = rdb.Close() })
	l := &lib{t: t, dir: dir, url: srv.URL(), prefix: "bull", queue: "mail"}
	kind := bullmq.New(queues.Env{RDB: rdb})

	var f fillResult
	l.run(&f, "fill")
	if !strings.HasPrefix(f.Version, "bullmq:"+dir[len("bullmq"):]+".") {
		t.Fatalf("meta's version is %q", f.Version)
	}
	hold, holder := l.hold("5000") // renewed every 2.5 s: a loaded machine does not let it lapse
	if hold != f.IDs.Hold {
		t.Fatalf("the worker took %s, want the oldest waiting job %s", hold, f.IDs.Hold)
	}
	qq, err := kind.Open("mail")
	if err != nil {
		t.Fatal(err)
	}
	q := qq.(*bullmq.Queue)
	if q.Address() != "bullmq:mail" {
		t.Errorf("address %q", q.Address())
	}

	t.Run("counts", func(t *testing.T) {
		sameCounts(t, q, l)
		c, err := q.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c.Version != f.Version || c.ReadOnly != "" {
			t.Errorf("version %q read-only %q, want %q writable", c.Version, c.ReadOnly, f.Version)
		}
		if c.OldestReady == nil || *c.OldestReady < 0 || *c.OldestReady > time.Minute {
			t.Errorf("oldest ready %v, want the age of a job added seconds ago", c.OldestReady)
		}
	})

	t.Run("discover", func(t *testing.T) {
		// A queue in another prefix: BullMQ's Queue writes its meta.
		other := &lib{t: t, dir: dir, url: srv.URL(), prefix: "myapp", queue: "other"}
		other.counts()
		found := map[string]bool{}
		for cursor := uint64(0); ; {
			names, next, err := kind.Discover(ctx, cursor, 10)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range names {
				found[n] = true
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		if len(found) != 2 || !found["mail"] || !found["myapp:other"] {
			t.Errorf("discovered %v, want mail and myapp:other", found)
		}
		oq, err := kind.Open("myapp:other")
		if err != nil {
			t.Fatal(err)
		}
		sameCounts(t, oq, other)
	})

	t.Run("get", func(t *testing.T) {
		all := append(append(append(append(append([]string{hold, f.IDs.Parent, f.IDs.Child}, f.IDs.Failed...),
			f.IDs.Completed...), f.IDs.Wait...), f.IDs.Prioritized...), f.IDs.Delayed...)
		sameState(t, q, l, append(all, "no-such-job")...)

		j, err := q.Get(ctx, f.IDs.Failed[0])
		if err != nil {
			t.Fatal(err)
		}
		var data map[string]any
		if err := json.Unmarshal([]byte(j.Data), &data); err != nil || data["kind"] != "fail" {
			t.Errorf("data %q: %v", j.Data, err)
		}
		if j.State != queues.Dead || j.Name != "fail" || j.Attempts != 1 || j.Error != "boom 0" ||
			!strings.HasPrefix(j.Stack, "at ") || j.Created.IsZero() || j.Started.IsZero() || j.Finished.IsZero() {
			t.Errorf("failed job %+v", j)
		}
		if opts, _ := j.Extra["opts"].(map[string]any); opts["attempts"] != float64(1) {
			t.Errorf("opts %v", j.Extra["opts"])
		}
		j, err = q.Get(ctx, f.IDs.Delayed[0])
		if err != nil {
			t.Fatal(err)
		}
		if j.State != queues.Delayed || j.Due.Sub(j.Created) != time.Hour {
			t.Errorf("delayed job due %v, created %v: want an hour later", j.Due, j.Created)
		}
		j, err = q.Get(ctx, f.IDs.Completed[1])
		if err != nil {
			t.Fatal(err)
		}
		if rv, _ := j.Extra["returnvalue"].(map[string]any); j.State != queues.Done || rv["ok"] != float64(1) {
			t.Errorf("completed job %+v", j)
		}
		j, err = q.Get(ctx, hold)
		if err != nil || j.State != queues.Inflight || j.Started.IsZero() {
			t.Errorf("active job %+v: %v", j, err)
		}
	})

	t.Run("scan", func(t *testing.T) {
		ids := func(opt queues.ScanOptions) []string {
			var out []string
			err := q.Scan(ctx, opt, func(jobs []queues.Job) error {
				if opt.Page > 0 && len(jobs) > opt.Page {
					t.Errorf("a page of %d jobs, want at most %d", len(jobs), opt.Page)
				}
				for _, j := range jobs {
					if opt.State != "" && j.State != opt.State {
						t.Errorf("%s in a scan of %s is %s", j.ID, opt.State, j.State)
					}
					out = append(out, j.ID)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			sort.Strings(out)
			return out
		}
		sorted := func(s ...string) []string { s = slices.Clone(s); sort.Strings(s); return s }
		for _, c := range []struct {
			state string
			want  []string
		}{
			{queues.Ready, sorted(append(append(slices.Clone(f.IDs.Wait), f.IDs.Child), f.IDs.Prioritized...)...)},
			{queues.Delayed, sorted(f.IDs.Delayed...)},
			{queues.Inflight, []string{hold}},
			{queues.Dead, sorted(f.IDs.Failed...)},
			{queues.Done, sorted(f.IDs.Completed...)},
		} {
			if got := ids(queues.ScanOptions{State: c.state, Page: 1}); !slices.Equal(got, c.want) {
				t.Errorf("scan %s: %v, want %v", c.state, got, c.want)
			}
		}
		if got := ids(queues.ScanOptions{}); len(got) != 14 {
			t.Errorf("scan of every state: %d jobs %v, want 14", len(got), got)
		}
		if got := ids(queues.ScanOptions{Grep: "haystack-needle"}); !slices.Equal(got, []string{f.IDs.Wait[1]}) {
			t.Errorf("grep: %v, want %s", got, f.IDs.Wait[1])
		}
		if got := ids(queues.ScanOptions{Grep: "urgent"}); !slices.Equal(got, sorted(f.IDs.Prioritized...)) {
			t.Errorf("grep by name: %v", got)
		}
		if got := ids(queues.ScanOptions{Max: 3, Page: 2}); len(got) != 3 {
			t.Errorf("max 3: %v", got)
		}
		if err := q.Scan(ctx, queues.ScanOptions{State: queues.Retry}, func([]queues.Job) error { return nil }); !errors.Is(err, names.ErrInvalid) {
			t.Errorf("scan of retry: %v, want ErrInvalid", err)
		}
	})

	t.Run("remove refuses active", func(t *testing.T) {
		res, err := q.Remove(ctx, []string{hold}, false)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Done) != 0 || !strings.Contains(res.Skipped[hold], "active") {
			t.Errorf("remove of an active job without force: %+v", res)
		}
		if s := l.state(hold); s != "active" {
			t.Errorf("BullMQ says %s after the refused remove", s)
		}
	})

	t.Run("retry", func(t *testing.T) {
		res, err := q.Retry(ctx, []string{f.IDs.Failed[0], f.IDs.Failed[3], f.IDs.Completed[0], "no-such-job"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Done, []string{f.IDs.Failed[0], f.IDs.Failed[3]}) || len(res.Skipped) != 2 {
			t.Errorf("retry: %+v", res)
		}
		if s := l.state(f.IDs.Failed[0]); s != "waiting" {
			t.Errorf("BullMQ says the retried job is %s", s)
		}
		// 5.x's Job.retry pushes a job with a priority to wait; 6.x's
		// puts it back among the prioritized.
		want := map[string]string{"bullmq5": "waiting", "bullmq6": "prioritized"}[dir]
		if s := l.state(f.IDs.Failed[3]); s != want {
			t.Errorf("BullMQ says the retried job with a priority is %s, want %s", s, want)
		}
		sameCounts(t, q, l)
	})

	t.Run("redrive", func(t *testing.T) {
		res, err := q.Redrive(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := sorted(res.Done...); !slices.Equal(got, sorted(f.IDs.Failed[1:3]...)) {
			t.Errorf("redrive moved %v, want %v", got, f.IDs.Failed[1:3])
		}
		for id, s := range l.states(f.IDs.Failed[:3]...) {
			if s == nil || *s != "waiting" {
				t.Errorf("BullMQ says redriven %s is %v", id, s)
			}
		}
		sameCounts(t, q, l)
	})

	t.Run("pause", func(t *testing.T) {
		if err := q.Pause(ctx); err != nil {
			t.Fatal(err)
		}
		if !l.counts().Paused {
			t.Error("BullMQ's isPaused() is false after chatq's pause")
		}
		sameCounts(t, q, l)
		if err := q.Resume(ctx); err != nil {
			t.Fatal(err)
		}
		if l.counts().Paused {
			t.Error("BullMQ's isPaused() is true after chatq's resume")
		}
		sameCounts(t, q, l)
		// Paused by BullMQ, resumed by chatq.
		var v struct{ Paused bool }
		l.run(&v, "pause")
		c, err := q.Counts(ctx)
		if err != nil || !v.Paused || c.Paused == nil || !*c.Paused {
			t.Fatalf("after BullMQ's pause chatq reads paused %v: %v", c.Paused, err)
		}
		sameCounts(t, q, l)
		if err := q.Resume(ctx); err != nil {
			t.Fatal(err)
		}
		if l.counts().Paused {
			t.Error("BullMQ's isPaused() is true after chatq resumed its pause")
		}
		sameCounts(t, q, l)
	})

	t.Run("retry and redrive while paused", func(t *testing.T) {
		// On a queue of its own, so that the worker failing its jobs
		// takes no other.
		pl := &lib{t: t, dir: dir, url: srv.URL(), prefix: "bull", queue: "held"}
		var failed struct{ IDs []string }
		pl.run(&failed, "fail", "3")
		var v struct{ Paused bool }
		pl.run(&v, "pause")
		pq, err := kind.Open("held")
		if err != nil {
			t.Fatal(err)
		}
		res, err := pq.(*bullmq.Queue).Retry(ctx, failed.IDs[:1])
		if err != nil || len(res.Done) != 1 {
			t.Fatalf("retry: %+v, %v", res, err)
		}
		res, err = pq.(*bullmq.Queue).Redrive(ctx, 0)
		if err != nil || len(res.Done) != 2 {
			t.Fatalf("redrive: %+v, %v", res, err)
		}
		// 5.x keeps a paused queue's jobs in its paused list, 6.x in wait.
		c := pl.counts()
		want := map[string][2]int64{"bullmq5": {0, 3}, "bullmq6": {3, 0}}[dir]
		if c.Counts["waiting"] != want[0] || c.Counts["paused"] != want[1] || !c.Paused {
			t.Errorf("BullMQ counts %v (paused %v) after retry and redrive, want waiting %d, paused %d", c.Counts, c.Paused, want[0], want[1])
		}
		sameCounts(t, pq, pl)
		if err := pq.(*bullmq.Queue).Resume(ctx); err != nil {
			t.Fatal(err)
		}
		got := pl.work(failed.IDs...)
		if len(got) != 3 {
			t.Errorf("BullMQ's worker processed %v, want %v", got, failed.IDs)
		}
		sameCounts(t, pq, pl)
	})

	t.Run("remove", func(t *testing.T) {
		gone := []string{f.IDs.Delayed[0], f.IDs.Wait[0], f.IDs.Prioritized[0], f.IDs.Completed[1]}
		res, err := q.Remove(ctx, append(slices.Clone(gone), "no-such-job"), false)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Done, gone) || res.Skipped["no-such-job"] == "" {
			t.Errorf("remove: %+v", res)
		}
		for id, s := range l.states(gone...) {
			if s != nil {
				t.Errorf("BullMQ still has removed %s, %s", id, *s)
			}
		}
		for _, id := range gone {
			if n := rdb.Exists(ctx, "bull:mail:"+id, "bull:mail:"+id+":logs").Val(); n != 0 {
				t.Errorf("%s's keys are left", id)
			}
		}
		sameCounts(t, q, l)
		// The flow's only child removed: its parent no longer waits for
		// children, as BullMQ's remove leaves it.
		res, err = q.Remove(ctx, []string{f.IDs.Child}, false)
		if err != nil || !slices.Equal(res.Done, []string{f.IDs.Child}) {
			t.Fatalf("remove of the child: %+v, %v", res, err)
		}
		if s := l.state(f.IDs.Parent); s != "waiting" {
			t.Errorf("BullMQ says the parent of the removed child is %s, want waiting", s)
		}
		sameCounts(t, q, l)
	})

	t.Run("recover", func(t *testing.T) {
		// The holding worker dies; its lock expires; chatq moves the job
		// back, and another worker of BullMQ's finishes it.
		if res, err := q.Recover(ctx, queues.RecoverOptions{}); err != nil || len(res.Done) != 0 {
			t.Fatalf("recover while the lock is held: %+v, %v", res, err)
		}
		if err := holder.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(60 * time.Second)
		for rdb.Exists(ctx, "bull:mail:"+hold+":lock").Val() == 1 {
			if time.Now().After(deadline) {
				t.Fatal("the dead worker's lock did not expire")
			}
			time.Sleep(50 * time.Millisecond)
		}
		res, err := q.Recover(ctx, queues.RecoverOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(res.Done, []string{hold}) {
			t.Fatalf("recover: %+v, want %s", res, hold)
		}
		if s := l.state(hold); s != "waiting" {
			t.Errorf("BullMQ says the recovered job is %s", s)
		}
		sameCounts(t, q, l)
	})

	t.Run("work", func(t *testing.T) {
		// BullMQ's own worker processes what chatq retried, redrove and
		// recovered.
		want := append(slices.Clone(f.IDs.Failed), hold)
		got := l.work(want...)
		for _, id := range want {
			if !slices.Contains(got, id) {
				t.Errorf("BullMQ's worker did not process %s (processed %v)", id, got)
			}
		}
		for id, s := range l.states(want...) {
			if s == nil || *s != "completed" {
				t.Errorf("%s is %v after BullMQ's worker", id, s)
			}
		}
		sameCounts(t, q, l)
	})

	t.Run("recover past the stall limit", func(t *testing.T) {
		// With the workers' maxStalledCount at 0, chatq marks the job as
		// BullMQ's check does, and BullMQ's worker fails it when it takes
		// it, without running it.
		var added struct{ ID string }
		l.run(&added, "add", "stalls")
		id, worker := l.hold("1000")
		if id != added.ID {
			t.Fatalf("the worker took %s, want %s", id, added.ID)
		}
		if err := worker.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(20 * time.Second)
		for rdb.Exists(ctx, "bull:mail:"+id+":lock").Val() == 1 {
			if time.Now().After(deadline) {
				t.Fatal("the dead worker's lock did not expire")
			}
			time.Sleep(50 * time.Millisecond)
		}
		strict := bullmq.New(queues.Env{RDB: rdb})
		strict.MaxStalledCount = 0
		sq, err := strict.Open("mail")
		if err != nil {
			t.Fatal(err)
		}
		res, err := sq.(*bullmq.Queue).Recover(ctx, queues.RecoverOptions{IDs: []string{id, f.IDs.Completed[0]}})
		if err != nil || !slices.Equal(res.Done, []string{id}) || res.Skipped[f.IDs.Completed[0]] == "" {
			t.Fatalf("recover: %+v, %v", res, err)
		}
		if got := l.work(id); slices.Contains(got, id) {
			t.Errorf("BullMQ's worker ran the job stalled past the limit")
		}
		j, err := q.Get(ctx, id)
		if err != nil || j.State != queues.Dead || !strings.Contains(j.Error, "stalled more than allowable limit") {
			t.Errorf("the job stalled past the limit: %+v, %v", j, err)
		}
		if s := l.state(id); s != "failed" {
			t.Errorf("BullMQ says it is %s", s)
		}
		sameCounts(t, q, l)
	})

	t.Run("remove force", func(t *testing.T) {
		var added struct{ ID string }
		l.run(&added, "add", "held")
		id, _ := l.hold("30000")
		if id != added.ID {
			t.Fatalf("the worker took %s, want %s", id, added.ID)
		}
		res, err := q.Remove(ctx, []string{id}, false)
		if err != nil || len(res.Done) != 0 {
			t.Fatalf("remove without force: %+v, %v", res, err)
		}
		res, err = q.Remove(ctx, []string{id}, true)
		if err != nil || !slices.Equal(res.Done, []string{id}) {
			t.Fatalf("remove with force: %+v, %v", res, err)
		}
		if s := l.state(id); s != "<none>" {
			t.Errorf("BullMQ says the removed active job is %s", s)
		}
		if n := rdb.Exists(ctx, "bull:mail:"+id, "bull:mail:"+id+":lock").Val(); n != 0 {
			t.Errorf("the job's hash or lock is left")
		}
		sameCounts(t, q, l)
	})
}

func sorted(s ...string) []string {
	s = slices.Clone(s)
	sort.Strings(s)
	return s
}
