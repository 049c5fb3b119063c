//go:build !race

package e2e

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/cmd"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/memtest"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/shardlist"
)

// The long-running commands keep no memory per message or job: each runs in
// this process (through cmd.Run, as the binary does) against a
// redis-server of the test's own, and the heap after N iterations, after a
// GC, must be within a bound of the heap after N/10 (see memtest.Flat).
// The figures (heap and the process's RSS) are logged for
// docs/reliability.md. Not under the race detector, whose bookkeeping is
// not the command's.

// memoryServer is a redis-server of the test's own, without persistence.
func memoryServer(t *testing.T) *redistest.Server {
	t.Helper()
	return redistest.StartServer(t, "--appendonly", "no")
}

// lineCounter counts the lines written to it and keeps none.
type lineCounter struct{ n atomic.Int64 }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n.Add(int64(bytes.Count(p, []byte{'\n'})))
	return len(p), nil
}

// runInProcess runs a long-running chatq command line in this process
// until ctx ends, returning its exit code on done.
func runInProcess(ctx context.Context, url string, out io.Writer, errOut *lockedBuffer, args ...string) chan int {
	done := make(chan int, 1)
	go func() {
		io := &iostreams.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}
		done <- cmd.Run(ctx, append([]string{"--url", url, "--prefix", "m:"}, args...), io, func(string) string { return "" })
	}()
	return done
}

// TestWatchMemoryIsFlat: chat watch --mark over 1e5 messages.
func TestWatchMemoryIsFlat(t *testing.T) {
	s := memoryServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rdb := s.Client()
	chats := chat.New(rdb, chat.Options{Prefix: "m:"})
	if _, err := chats.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "room"}); err != nil {
		t.Fatal(err)
	}
	var out lineCounter
	var errOut lockedBuffer
	done := runInProcess(ctx, s.URL(), &out, &errOut, "-o", "json", "chat", "watch", "jeff", "--mark")
	const n = 100_000
	send := func(from, to int) {
		var wg sync.WaitGroup
		var failed atomic.Int64
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := from + w; i < to; i += 8 {
					if _, err := chats.Send(ctx, "room", "joe", "message "+strconv.Itoa(i)); err != nil {
						failed.Add(1)
					}
				}
			}()
		}
		wg.Wait()
		if failed.Load() > 0 {
			t.Fatalf("%d sends failed", failed.Load())
		}
		waitDelivered(t, &out, to, &errOut)
	}
	send(0, n/10)
	early := memtest.Take()
	send(n/10, n)
	late := memtest.Take()
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("watch exited %d: %s", code, errOut.String())
	}
	memtest.Flat(t, "chat watch --mark, messages", n, early, late)
}

// TestWorkMemoryIsFlat: queue work over 1e4 jobs, each running true(1).
func TestWorkMemoryIsFlat(t *testing.T) {
	s := memoryServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// The jobs are pushed by chatq processes: a command run in this
	// process leaves cobra's package-level completion registry holding its
	// flags, which would count here.
	env := chatqEnv(t, "CHATQ_URL="+s.URL(), "CHATQ_PREFIX=m:")
	mustRun(t, env, "queue", "create", "jobs")
	push := func(from, to int) {
		var lines strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&lines, "job %d\n", i)
		}
		if r := runStdin(ctx, env, lines.String(), "queue", "push", "jobs", "--lines", "-"); r.code != 0 {
			t.Fatal(r)
		}
	}
	var errOut lockedBuffer
	var out lineCounter
	done := runInProcess(ctx, s.URL(), &out, &errOut, "-o", "json", "queue", "work", "jobs", "--concurrency", "4", "--", "true")
	const n = 10_000
	push(0, n/10)
	waitDelivered(t, &out, n/10, &errOut)
	early := memtest.Take()
	push(n/10, n)
	waitDelivered(t, &out, n, &errOut)
	late := memtest.Take()
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("work exited %d: %s", code, errOut.String())
	}
	memtest.Flat(t, "queue work, jobs", n, early, late)
}

// TestMetricsListenMemoryIsFlat: metrics --listen over 1e4 scrapes (HTTP
// requests to /metrics, as Prometheus sends them, the text format and
// OpenMetrics in turn) of a server whose queues come and go (one lives for
// ten scrapes) while messages are pushed, received and dead-lettered, list
// items pushed and popped and chat messages sent between scrapes.
func TestMetricsListenMemoryIsFlat(t *testing.T) {
	s := memoryServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rdb := s.Client()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	q := delayq.New(rdb, delayq.Options{Prefix: "m:"})
	must(q.Create(ctx, "jobs-dead", delayq.Attributes{}))
	must(q.Create(ctx, "jobs", delayq.Attributes{MaxReceives: 1, DeadLetter: "jobs-dead"}))
	lists := shardlist.New(rdb, shardlist.Options{Prefix: "m:", ShardSize: 100})
	_, err := lists.RPush(ctx, "events", "a", "b", "c")
	must(err)
	chats := chat.New(rdb, chat.Options{Prefix: "m:"})
	_, err = chats.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "room"})
	must(err)

	var out, errOut lockedBuffer
	done := runInProcess(ctx, s.URL(), &out, &errOut, "-o", "json", "metrics", "--listen", "127.0.0.1:0")
	var url string
	if !waitUntil(time.Minute, func() bool {
		for _, v := range jsonLines[struct{ URL string }](out.String()) {
			url = v.URL
		}
		return url != ""
	}) {
		t.Fatalf("metrics --listen said no URL: %s", errOut.String())
	}
	scrape := func(i int) {
		if i%10 == 0 {
			must(q.Create(ctx, fmt.Sprintf("tmp-%d", i), delayq.Attributes{}))
			if i >= 10 {
				_, err := q.Delete(ctx, fmt.Sprintf("tmp-%d", i-10), -1)
				must(err)
			}
		}
		_, err := q.Push(ctx, "jobs", "resize photo", delayq.PushOptions{})
		must(err)
		// Visible again at once (vt -1: 0), so that the next receive moves it
		// to jobs-dead.
		_, err = q.Receive(ctx, "jobs", delayq.ReceiveOptions{N: 1, VT: -1})
		must(err)
		_, err = lists.RPush(ctx, "events", "e"+strconv.Itoa(i))
		must(err)
		_, err = lists.LPop(ctx, "events", 1)
		must(err)
		_, err = chats.Send(ctx, "room", "joe", "message "+strconv.Itoa(i))
		must(err)
		accept := ""
		if i%2 == 1 {
			accept = "application/openmetrics-text;version=1.0.0"
		}
		if up, err := scrapeUpAccept(url, accept); err != nil || up != 1 {
			t.Fatalf("scrape %d: chatq_up %v, %v; stderr: %s", i, up, err, errOut.String())
		}
	}
	const n = 10_000
	for i := range n / 10 {
		scrape(i)
	}
	early := memtest.Take()
	for i := n / 10; i < n; i++ {
		scrape(i)
	}
	late := memtest.Take()
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("metrics --listen exited %d: %s", code, errOut.String())
	}
	memtest.Flat(t, "metrics --listen, scrapes", n, early, late)
}

// waitDelivered waits until out has n lines (a deadline for a hang, not a
// performance budget).
func waitDelivered(t *testing.T, out *lineCounter, n int, errOut *lockedBuffer) {
	t.Helper()
	if !waitUntil(5*time.Minute, func() bool { return out.n.Load() >= int64(n) }) {
		t.Fatalf("%d of %d delivered in 5 minutes: %s", out.n.Load(), n, errOut.String())
	}
}
