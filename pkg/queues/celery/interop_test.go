package celery_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/celery"
)

// python is Debian's interpreter, which sees Debian's python3-celery.
const python = "/usr/bin/python3"

var interopDir, _ = filepath.Abs(filepath.Join("..", "..", "..", "testdata", "interop", "celery"))

// requireCelery skips t when Debian's python3-celery is missing, or fails
// it under CHATQ_REQUIRE_CELERY=1.
func requireCelery(t *testing.T) {
	t.Helper()
	err := exec.Command(python, "-c", "import celery, kombu.transport.redis").Run()
	if err != nil {
		if os.Getenv("CHATQ_REQUIRE_CELERY") == "1" {
			t.Fatalf("CHATQ_REQUIRE_CELERY=1 but %s cannot import celery (apt-get install python3-celery): %v", python, err)
		}
		t.Skipf("python3-celery not installed: %v", err)
	}
}

// lib drives Celery's own client and worker (testdata/interop/celery)
// on one Redis and global_keyprefix.
type lib struct {
	t                *testing.T
	url, prefix, dir string
}

func (l *lib) env() []string {
	return append(os.Environ(), "CELERY_TEST_URL="+l.url, "CELERY_TEST_PREFIX="+l.prefix,
		"CELERY_TEST_DIR="+l.dir, "PYTHONDONTWRITEBYTECODE=1")
}

func (l *lib) run(v any, args ...string) {
	l.t.Helper()
	cmd := exec.Command(python, append([]string{"interop.py"}, args...)...)
	cmd.Dir, cmd.Env, cmd.Stderr = interopDir, l.env(), os.Stderr
	out, err := cmd.Output()
	if err != nil {
		l.t.Fatalf("interop.py %v: %v", args, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), v); err != nil {
		l.t.Fatalf("interop.py %v printed %q: %v", args, out, err)
	}
}

func (l *lib) send(queue, label string, opts ...string) string {
	var r struct{ ID string }
	l.run(&r, append([]string{"send", queue, label}, opts...)...)
	return r.ID
}

type libCount struct {
	Ready, Delayed, Inflight int64
	UnackedIDs               []string `json:"unacked_ids"`
}

func (l *lib) counts(queues ...string) map[string]libCount {
	out := map[string]libCount{}
	l.run(&out, append([]string{"counts"}, queues...)...)
	return out
}

// worker starts Celery's worker (solo pool) on the queue "celery".
func (l *lib) worker(name string) *exec.Cmd {
	l.t.Helper()
	cmd := exec.Command(python, "-m", "celery", "-A", "celeryapp", "worker", "--pool", "solo", "-c", "1",
		"-Q", "celery", "-n", name+"@chatq", "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "warning")
	cmd.Dir, cmd.Env = interopDir, l.env()
	log, err := os.Create(filepath.Join(l.dir, name+".log"))
	if err != nil {
		l.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	l.t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
		log.Close()
		if l.t.Failed() {
			b, _ := os.ReadFile(log.Name())
			l.t.Logf("%s's log:\n%s", name, b)
		}
	})
	return cmd
}

// lines reads one of the files the tasks write (nil when none yet).
func (l *lib) lines(file string) []string {
	b, _ := os.ReadFile(filepath.Join(l.dir, file))
	return strings.Fields(strings.ReplaceAll(string(b), "\n", " \n "))
}

// ran is the tasks' records in ran.txt: id -> "label redelivered".
func (l *lib) ran() map[string]string {
	b, _ := os.ReadFile(filepath.Join(l.dir, "ran.txt"))
	out := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if f := strings.Fields(line); len(f) == 3 {
			out[f[0]] = f[1] + " " + f[2]
		}
	}
	return out
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// sameCounts checks chatq's counts of each queue against kombu's.
func sameCounts(t *testing.T, k *celery.Kind, l *lib, names ...string) map[string]libCount {
	t.Helper()
	want := l.counts(names...)
	for _, name := range names {
		q := open(t, k, l.prefix, name)
		c, err := q.Counts(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", q.Address(), err)
		}
		w := want[name]
		if *c.Ready != w.Ready || c.Delayed == nil || *c.Delayed != w.Delayed || *c.Inflight != w.Inflight {
			t.Fatalf("%s: chatq counts ready %d delayed %v inflight %v, kombu %+v", q.Address(), *c.Ready, c.Delayed, c.Inflight, w)
		}
	}
	return want
}

func open(t *testing.T, k *celery.Kind, prefix, name string) queues.Queue {
	t.Helper()
	addr := name
	if prefix != "" {
		addr = prefix + "|" + name
	}
	q, err := k.Open(addr)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestInterop fills every state with Celery's own client and worker
// (ETA tasks held by the worker, a task running when the worker is
// killed, ready tasks in priority lists and in a second queue), compares
// chatq's counts with kombu's, then recovers the killed worker's messages
// with chatq and checks a new worker runs them, and removes tasks; with
// and without kombu's global_keyprefix.
func TestInterop(t *testing.T) {
	requireCelery(t)
	for _, prefix := range []string{"", "chatq-test:"} {
		t.Run("prefix="+prefix, func(t *testing.T) {
			srv := redistest.StartServer(t)
			rdb := srv.Client()
			ctx := context.Background()
			l := &lib{t: t, url: srv.URL(), prefix: prefix, dir: t.TempDir()}
			k := celery.New(queues.Env{RDB: rdb})

			// Two ETA tasks, which a worker takes at once and holds.
			eta1 := l.send("celery", "eta1", "countdown=3600")
			eta2 := l.send("celery", "eta2", "countdown=3600")
			w1 := l.worker("w1")
			eventually(t, "the worker to hold the ETA tasks", func() bool { return l.counts("celery")["celery"].Delayed == 2 })
			// A task that blocks the solo worker, then ready ones behind it.
			blockID := l.send("celery", "block", "task=block")
			eventually(t, "the blocking task to start", func() bool { return len(l.lines("started.txt")) > 0 })
			ready := []string{l.send("celery", "r1"), l.send("celery", "r2", "priority=5"), l.send("celery", "r3", "priority=9")}
			other := []string{l.send("other", "o1"), l.send("other", "o2")}
			// The worker dies: its messages stay in unacked.
			if err := w1.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = w1.Wait()

			got := sameCounts(t, k, l, "celery", "other")
			if c := got["celery"]; c.Ready != 3 || c.Delayed != 2 || c.Inflight != 1 {
				t.Fatalf("kombu counts %+v, want ready 3 delayed 2 inflight 1", c)
			}
			if c := got["other"]; c.Ready != 2 {
				t.Fatalf("kombu counts other %+v, want ready 2", c)
			}
			wantUnacked := []string{eta1, eta2, blockID}
			slices.Sort(wantUnacked)
			if !slices.Equal(got["celery"].UnackedIDs, wantUnacked) {
				t.Fatalf("kombu's unacked %v, want %v", got["celery"].UnackedIDs, wantUnacked)
			}

			// Discovery finds both queues under the prefix.
			names, err := discoverAll(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"celery", "other"} {
				want := n
				if prefix != "" {
					want = prefix + "|" + n
				}
				if !slices.Contains(names, want) {
					t.Fatalf("discovered %q, want %q among them", names, want)
				}
			}

			q := open(t, k, prefix, "celery")
			// Get finds a task by id, its name and arguments.
			j, err := q.Get(ctx, ready[1])
			if err != nil || j.Name != "chatq.rec" || !strings.Contains(j.Data, `"r2"`) || j.KindState != "priority 3" {
				t.Fatalf("Get(%s) = %+v, %v", ready[1], j, err)
			}
			j, err = q.Get(ctx, eta1)
			if err != nil || j.State != queues.Delayed || j.Due.Before(time.Now().Add(50*time.Minute)) {
				t.Fatalf("Get(eta1) = %+v, %v", j, err)
			}
			// peek --grep by the arguments' repr.
			var grepped []string
			err = q.Scan(ctx, queues.ScanOptions{Grep: "'eta2'"}, func(jobs []queues.Job) error {
				for _, j := range jobs {
					grepped = append(grepped, j.ID)
				}
				return nil
			})
			if err != nil || !slices.Equal(grepped, []string{eta2}) {
				t.Fatalf("grep 'eta2': %v, %v", grepped, err)
			}

			// Within kombu's default visibility timeout nothing is restored.
			res, err := q.(queues.Recoverer).Recover(ctx, queues.RecoverOptions{})
			if err != nil || len(res.Done) != 0 {
				t.Fatalf("Recover within the visibility timeout: %+v, %v", res, err)
			}
			sameCounts(t, k, l, "celery", "other")

			// With a visibility timeout of 1 s, the dead worker's messages
			// go back to the queue; kombu agrees.
			k.VisibilityTimeout = time.Second
			eventually(t, "the unacked messages to be older than 1 s", func() bool {
				var young int
				err := q.Scan(ctx, queues.ScanOptions{}, func(jobs []queues.Job) error {
					for _, j := range jobs {
						if j.State != queues.Ready && j.Idle <= time.Second {
							young++
						}
					}
					return nil
				})
				return err == nil && young == 0
			})
			res, err = q.(queues.Recoverer).Recover(ctx, queues.RecoverOptions{})
			if err != nil {
				t.Fatal(err)
			}
			slices.Sort(res.Done)
			if !slices.Equal(res.Done, wantUnacked) {
				t.Fatalf("Recover restored %v, want %v (%v)", res.Done, wantUnacked, res.Skipped)
			}
			got = sameCounts(t, k, l, "celery", "other")
			if c := got["celery"]; c.Ready != 6 || c.Delayed != 0 || c.Inflight != 0 {
				t.Fatalf("after Recover kombu counts %+v, want ready 6", c)
			}
			k.VisibilityTimeout = celery.DefaultVisibilityTimeout

			// A new worker runs what was restored and what was waiting,
			// and holds the ETA tasks again.
			if err := os.WriteFile(filepath.Join(l.dir, "release"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			w2 := l.worker("w2")
			runs := append([]string{blockID}, ready...)
			eventually(t, "the new worker to run the recovered and ready tasks", func() bool {
				ran := l.ran()
				for _, id := range runs {
					if _, ok := ran[id]; !ok {
						return false
					}
				}
				return l.counts("celery")["celery"].Delayed == 2
			})
			if r := l.ran()[blockID]; r != "block True" {
				t.Fatalf("the recovered task ran as %q, want redelivered", r)
			}
			if len(l.ran()) != len(runs) {
				t.Fatalf("ran %v, want only %v", l.ran(), runs)
			}
			sameCounts(t, k, l, "celery", "other")

			// Remove: a ready task of "other"; a held ETA task only with force.
			o := open(t, k, prefix, "other")
			res, err = o.(queues.Remover).Remove(ctx, []string{other[0], "no-such-id"}, false)
			if err != nil || !slices.Equal(res.Done, []string{other[0]}) || res.Skipped["no-such-id"] == "" {
				t.Fatalf("Remove ready: %+v, %v", res, err)
			}
			res, err = q.(queues.Remover).Remove(ctx, []string{eta1}, false)
			if err != nil || len(res.Done) != 0 || res.Skipped[eta1] == "" {
				t.Fatalf("Remove unacked without force: %+v, %v", res, err)
			}
			res, err = q.(queues.Remover).Remove(ctx, []string{eta1}, true)
			if err != nil || !slices.Equal(res.Done, []string{eta1}) {
				t.Fatalf("Remove unacked with force: %+v, %v", res, err)
			}
			got = sameCounts(t, k, l, "celery", "other")
			if got["other"].Ready != 1 || got["celery"].Delayed != 1 || !slices.Equal(got["celery"].UnackedIDs, []string{eta2}) {
				t.Fatalf("after Remove kombu counts %+v", got)
			}
			// The worker's warm shutdown restores what it holds: eta2, and
			// not eta1, whose record chatq removed.
			if err := w2.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			_ = w2.Wait()
			got = sameCounts(t, k, l, "celery", "other")
			if c := got["celery"]; c.Ready != 1 || c.Delayed != 0 || c.Inflight != 0 {
				t.Fatalf("after the worker's shutdown kombu counts %+v, want eta2 ready", c)
			}
			if j, err := q.Get(ctx, eta2); err != nil || j.State != queues.Ready {
				t.Fatalf("Get(eta2) = %+v, %v", j, err)
			}
			if _, err := q.Get(ctx, eta1); err == nil {
				t.Fatal("eta1 still found after Remove")
			}

			// Purge: "other"'s ready tasks (one left, two sent now) are
			// gone for kombu too; "celery"'s are untouched.
			l.send("other", "p1")
			l.send("other", "p2")
			if n, err := o.(queues.Purger).Purge(ctx, 2); !errors.Is(err, queues.ErrQueueNotEmpty) || n != 0 {
				t.Fatalf("Purge(2) of 3: %d, %v", n, err)
			}
			if n, err := o.(queues.Purger).Purge(ctx, 3); err != nil || n != 3 {
				t.Fatalf("Purge: %d, %v", n, err)
			}
			got = sameCounts(t, k, l, "celery", "other")
			if got["other"].Ready != 0 || got["celery"].Ready != 1 {
				t.Fatalf("after Purge kombu counts %+v", got)
			}
		})
	}
}

func discoverAll(ctx context.Context, k *celery.Kind) ([]string, error) {
	var out []string
	var cursor uint64
	for {
		names, next, err := k.Discover(ctx, cursor, 100)
		if err != nil {
			return nil, err
		}
		out = append(out, names...)
		if cursor = next; cursor == 0 {
			return out, nil
		}
	}
}
