package rq_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/rq"
	"github.com/redis/go-redis/v9"
)

const python = "/usr/bin/python3"

// requireRQ skips the test when Debian's python3-rq is missing, and
// fails it under CHATQ_REQUIRE_RQ=1.
func requireRQ(t *testing.T) {
	t.Helper()
	if err := exec.Command(python, "-c", "import rq").Run(); err != nil {
		if os.Getenv("CHATQ_REQUIRE_RQ") == "1" {
			t.Fatalf("CHATQ_REQUIRE_RQ=1 but RQ is not importable by %s: %v", python, err)
		}
		t.Skipf("RQ not installed for %s (apt-get install python3-rq): %v", python, err)
	}
}

type lib struct {
	t        *testing.T
	url, dir string
}

// run runs interop.py with args and decodes its JSON into v.
func (l *lib) run(v any, args ...string) {
	l.t.Helper()
	script, _ := filepath.Abs("../../../testdata/interop/rq/interop.py")
	cmd := exec.Command(python, append([]string{script, l.url}, args...)...)
	cmd.Env = append(os.Environ(), "RQ_INTEROP_DIR="+l.dir)
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		l.t.Fatalf("interop.py %v: %v\n%s", args, err, msg)
	}
	if v != nil {
		if err := json.Unmarshal(out, v); err != nil {
			l.t.Fatalf("interop.py %v: %v\n%s", args, err, out)
		}
	}
}

type status struct {
	Status *string  `json:"status"`
	In     []string `json:"in"`
}

func (l *lib) status(ids ...string) map[string]status {
	m := map[string]status{}
	l.run(&m, append([]string{"status"}, ids...)...)
	return m
}

func (l *lib) wantStatus(ids []string, want string, in string) {
	l.t.Helper()
	for id, s := range l.status(ids...) {
		got := "<deleted>"
		if s.Status != nil {
			got = *s.Status
		}
		if got != want || (in != "" && !slices.Contains(s.In, in)) || (in == "" && len(s.In) > 0) {
			l.t.Errorf("RQ says job %s is %s in %v; want %s in %q", id, got, s.In, want, in)
		}
	}
}

func TestInterop(t *testing.T) {
	requireRQ(t)
	srv := redistest.StartServer(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	l := &lib{t: t, url: srv.URL(), dir: t.TempDir()}

	var fill struct {
		IDs map[string][]string `json:"ids"`
	}
	l.run(&fill, "fill")
	ids := fill.IDs

	kind := rq.New(queues.Env{RDB: rdb})
	names, _, err := kind.Discover(ctx, 0, 100)
	if err != nil || !slices.Equal(names, []string{"work"}) {
		t.Fatalf("Discover = %v, %v; want [work]", names, err)
	}
	qq, _ := kind.Open("work")
	q := qq.(*rq.Queue)

	// chatq's counts against RQ's Queue.count and registry counts (before
	// the started job's entry expires: RQ's count would then clean it).
	var rc map[string]int64
	l.run(&rc, "counts")
	c, err := q.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{"queue": *c.Ready, "scheduled": *c.Delayed, "started": *c.Inflight,
		"failed": *c.Dead, "finished": *c.Done, "deferred": c.Other["deferred"], "canceled": c.Other["canceled"]}
	want := map[string]int64{"queue": 3, "scheduled": 2, "started": 1, "failed": 3, "finished": 2, "deferred": 1, "canceled": 0}
	for k, v := range want {
		if rc[k] != v || got[k] != v {
			t.Errorf("%s: chatq %d, RQ %d, want %d", k, got[k], rc[k], v)
		}
	}
	if c.Retry != nil {
		t.Errorf("Retry = %d, want nil", *c.Retry)
	}

	// Get and Scan show the failed jobs' exception.
	j, err := q.Get(ctx, ids["failed"][0])
	if err != nil || j.State != queues.Dead || !strings.Contains(j.Error, "boom") || j.Name != "rqjobs.work" {
		t.Errorf("Get(failed) = %+v, %v", j, err)
	}
	var scanned []string
	if err := q.Scan(ctx, queues.ScanOptions{State: queues.Dead}, func(js []queues.Job) error {
		for _, j := range js {
			scanned = append(scanned, j.ID)
		}
		return nil
	}); err != nil || len(scanned) != 3 {
		t.Errorf("Scan dead = %v, %v", scanned, err)
	}

	// Recover leaves a started job whose entry has not expired.
	res, err := q.Recover(ctx, queues.RecoverOptions{})
	if err != nil || len(res.Done) != 0 {
		t.Errorf("Recover before expiry = %+v, %v", res, err)
	}

	// Retry one failed job; Redrive the rest.
	res, err = q.Retry(ctx, []string{ids["failed"][0], ids["ready"][1]})
	if err != nil || !slices.Equal(res.Done, ids["failed"][:1]) || res.Skipped[ids["ready"][1]] == "" {
		t.Errorf("Retry = %+v, %v", res, err)
	}
	l.wantStatus(ids["failed"][:1], "queued", "queue")
	res, err = q.Redrive(ctx, 0)
	if err != nil || len(res.Done) != 2 {
		t.Errorf("Redrive = %+v, %v", res, err)
	}
	l.wantStatus(ids["failed"], "queued", "queue")

	// Remove: a ready, a scheduled and a finished job; the started one
	// only with force.
	rm := []string{ids["ready"][2], ids["scheduled"][0], ids["finished"][0]}
	res, err = q.Remove(ctx, append(rm, ids["started"][0]), false)
	if err != nil || !slices.Equal(res.Done, rm) || res.Skipped[ids["started"][0]] == "" {
		t.Errorf("Remove = %+v, %v", res, err)
	}
	l.wantStatus(rm, "<deleted>", "")

	// The started job's entry expires (its worker was SIGKILLed: no more
	// heartbeats); then Recover moves it to failed as RQ's cleanup does.
	score, err := rdb.ZScore(ctx, "rq:wip:work", ids["started"][0]).Result()
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(120 * time.Second)
	for time.Now().Unix() <= int64(score) {
		if time.Now().After(deadline) {
			t.Fatalf("started entry's score %v never passed", score)
		}
		time.Sleep(200 * time.Millisecond)
	}
	res, err = q.Recover(ctx, queues.RecoverOptions{})
	if err != nil || !slices.Equal(res.Done, ids["started"]) {
		t.Fatalf("Recover = %+v, %v", res, err)
	}
	l.wantStatus(ids["started"], "failed", "failed")
	j, err = q.Get(ctx, ids["started"][0])
	if err != nil || !strings.HasPrefix(j.Error, "Moved to FailedJobRegistry at") {
		t.Errorf("Get(recovered) = %+v, %v", j, err)
	}
	res, err = q.Retry(ctx, ids["started"])
	if err != nil || len(res.Done) != 1 {
		t.Errorf("Retry(recovered) = %+v, %v", res, err)
	}

	// RQ's own worker runs what chatq retried, redrove and recovered.
	l.run(nil, "burst")
	ran, err := os.ReadFile(filepath.Join(l.dir, "ran"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Fields(string(ran))
	for _, id := range append(append([]string{}, ids["failed"]...), ids["started"][0], ids["ready"][0], ids["deferred"][0]) {
		if !slices.Contains(lines, id) {
			t.Errorf("RQ's worker did not run %s (ran %v)", id, lines)
		}
	}
	for _, id := range rm[:1] {
		if slices.Contains(lines, id) {
			t.Errorf("RQ's worker ran removed job %s", id)
		}
	}
	l.wantStatus(ids["failed"], "finished", "finished")
	c, err = q.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	l.run(&rc, "counts")
	if *c.Ready != rc["queue"] || *c.Dead != rc["failed"] || *c.Done != rc["finished"] || *c.Inflight != rc["started"] {
		t.Errorf("after the worker: chatq %+v, RQ %v", c, rc)
	}
}
