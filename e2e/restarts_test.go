//go:build !race

package e2e

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// TestLongRunningThroughRestarts runs every long-running command at once
// against one redis-server with an append-only file (fsync always): `list
// blpop` and `list brpop` (each a loop of processes, one item each), `chat
// watch --mark`, `queue work`, `queue poll --wait` (a loop, each message
// acked by the test) and `metrics --listen` (scraped all along), and
// restarts the server ten times (CHATQ_RESTARTS=N for N: issue 35's ride
// is 20 on every server of the compatibility matrix). Before each
// restart everything sent so far has been delivered, so every command is
// waiting when its connections break; after it, each must carry on with the
// next items: none may exit (least of all 4, "the reply was lost": the
// first request after a reconnect must not go out on a connection the
// outage broke), nothing may be lost or delivered twice. Every scrape must
// answer, with chatq_up 0 while the server is down (one scrape in each
// outage that lasts) and chatq_up 1 again after each restart.
//
// Not under -race, as TestLiveReshard.
//
// Run alone: go test -run TestLongRunningThroughRestarts -count=1 -v ./e2e
// The 20-restart ride on every server of the matrix:
// CHATQ_RESTARTS=20 scripts/compat.sh --run TestLongRunningThroughRestarts --pkg ./e2e DIR...
func TestLongRunningThroughRestarts(t *testing.T) {
	s := redistest.StartServer(t)
	env := chatqEnv(t, "CHATQ_URL="+s.URL(), "CHATQ_PREFIX=t:")
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rdb := s.Client()
	mustRun(t, env, "queue", "create", "worked")
	mustRun(t, env, "queue", "create", "polled")
	mustRun(t, env, "chat", "create", "--from", "joe", "--to", "jeff", "--id", "room")

	watch := startChatq(t, env, "-o", "json", "chat", "watch", "jeff", "--mark", "--poll", "1s")
	work := startChatq(t, env, "-o", "json", "queue", "work", "worked", "--", "sh", "-c", "cat >/dev/null")
	metrics := startChatq(t, env, "-o", "json", "metrics", "--listen", "127.0.0.1:0")
	var metricsURL string
	if !waitUntil(2*time.Minute, func() bool {
		for _, v := range jsonLines[struct{ URL string }](metrics.out.String()) {
			metricsURL = v.URL
		}
		return metricsURL != "" || !metrics.running()
	}) || metricsURL == "" {
		t.Fatalf("metrics --listen said no URL: %s", metrics)
	}
	longRunning := []*proc{watch, work, metrics}

	left, right, chats, jobs, polled := newTally(), newTally(), newTally(), newTally(), newTally()
	var mu sync.Mutex
	var failed []result
	fail := func(r result) {
		mu.Lock()
		defer mu.Unlock()
		failed = append(failed, r)
	}

	// The loops of one-shot long-running commands: each process waits,
	// then takes one item.
	var looping atomic.Bool
	looping.Store(true)
	var loops sync.WaitGroup
	var waiting sync.Map // *proc -> true
	loop := func(args []string, got func(r result)) {
		loops.Add(1)
		go func() {
			defer loops.Done()
			for looping.Load() {
				p := startChatq(t, env, args...)
				waiting.Store(p, true)
				<-p.done
				waiting.Delete(p)
				r := result{args: p.args, code: p.code, stdout: p.out.String(), stderr: p.errOut.String()}
				switch {
				case r.code == 0:
					got(r)
				case r.code == 130 && !looping.Load():
					// interrupted at the end, waiting
				case p.interruptedAtStart() && !looping.Load():
					// interrupted at the end as it started, before
					// it handled SIGINT (2 of 10 runs, on a busy
					// machine)
				default:
					fail(r)
				}
			}
		}()
	}
	loop([]string{"list", "blpop", "left", "--wait", "0"}, func(r result) { left.deliver(strings.TrimSuffix(r.stdout, "\n")) })
	loop([]string{"list", "brpop", "right", "--wait", "0"}, func(r result) { right.deliver(strings.TrimSuffix(r.stdout, "\n")) })
	loop([]string{"-o", "json", "queue", "poll", "polled", "--wait", "10m"}, func(r result) {
		for _, m := range jsonLines[[]struct{ ID, Receipt string }](r.stdout) {
			for _, msg := range m {
				// Delivered once acked, so that no restart comes
				// between the two.
				if a := runOnce(ctx, env, "queue", "ack", "polled", msg.Receipt); a.code != 0 {
					fail(a)
				}
				polled.deliver(msg.ID)
			}
		}
	})

	parse := func() { countDelivered(watch, work, chats, jobs) }
	delivered := func() bool {
		parse()
		for _, tl := range []*tally{left, right, chats, jobs, polled} {
			if _, _, lost, _, _ := tl.counts(); lost > 0 {
				return false
			}
		}
		return true
	}
	send := func(r result, tl *tally, id string) {
		if r.code != 0 {
			fail(r)
			return
		}
		tl.send(id)
	}

	// Scrapes all along, restarts or not: each must answer, with a
	// chatq_up sample.
	var scrapes scrapeCounts
	stopScraping := make(chan struct{})
	scraping := make(chan struct{})
	go func() {
		defer close(scraping)
		for {
			select {
			case <-stopScraping:
				return
			case <-time.After(20 * time.Millisecond):
			}
			scrapes.add(scrapeUp(metricsURL))
		}
	}()
	var downScrapes []error // the scrape in each outage that lasts: chatq_up 0
	upAgain := 0            // the rounds after which a scrape said chatq_up 1

	restarts := restartCount(t, 10)
	for round := 0; round <= restarts; round++ {
		if round > 0 {
			// Down for a moment, or a while: a while, and the waits
			// notice and reconnect again and again meanwhile, and a
			// scrape meanwhile says chatq_up 0.
			s.Kill()
			down := time.Duration(round%4) * 400 * time.Millisecond
			var scraped chan error
			if down > 0 {
				scraped = make(chan error, 1)
				go func() {
					up, err := scrapeUp(metricsURL)
					if err == nil && up != 0 {
						err = fmt.Errorf("chatq_up %v while the server was down", up)
					}
					scraped <- err
				}()
			}
			time.Sleep(down)
			if scraped != nil {
				downScrapes = append(downScrapes, <-scraped)
			}
			s.Start()
		}
		for i := range 3 {
			item := "r" + strconv.Itoa(round) + "-" + strconv.Itoa(i)
			send(runOnce(ctx, env, "list", "rpush", "left", item), left, item)
			send(runOnce(ctx, env, "list", "rpush", "right", item), right, item)
			send(runOnce(ctx, env, "chat", "send", "room", "--from", "joe", item), chats, item)
			r := runOnce(ctx, env, "queue", "push", "worked", item)
			send(r, jobs, strings.TrimSpace(r.stdout))
			r = runOnce(ctx, env, "queue", "push", "polled", item)
			send(r, polled, strings.TrimSpace(r.stdout))
		}
		if !waitUntil(2*time.Minute, delivered) {
			waiting.Range(func(k, _ any) bool {
				p := k.(*proc)
				p.quit()
				t.Logf("waiting: %s", p)
				return true
			})
			t.Fatalf("round %d: not everything sent was delivered within 2 minutes; failed so far: %v\nwatch: %s\nwork: %s", round, failed, watch, work)
		}
		// Every command is back to waiting before the next restart, and
		// the metrics read the server again. The list pops' next processes
		// have reached their wait (BLMOVE, on a connection of its own): a
		// restart during the pop script each runs first (a write) loses
		// its reply, and the pop exits 4 as it must (2 of 10 runs once
		// metrics was scraped here, restarting a little later).
		if !waitUntil(2*time.Minute, func() bool { return blockedIn(rdb, "blmove") >= 2 }) {
			t.Fatalf("round %d: the list pops are not both waiting: %d in BLMOVE", round, blockedIn(rdb, "blmove"))
		}
		if waitUntil(2*time.Minute, func() bool { up, err := scrapeUp(metricsURL); return err == nil && up == 1 }) {
			upAgain++
		}
		for _, p := range longRunning {
			if !p.running() {
				t.Fatalf("round %d: ended: %s", round, p)
			}
		}
	}
	close(stopScraping)
	<-scraping

	looping.Store(false)
	waiting.Range(func(k, _ any) bool {
		if p := k.(*proc); p.running() {
			p.interrupt()
		}
		return true
	})
	loops.Wait()
	for _, p := range longRunning {
		if code := p.interrupt(); code != 0 {
			t.Errorf("exit %d on interrupt: %s", code, p)
		}
	}
	parse()
	for _, f := range failed {
		t.Errorf("failed: %s", f)
	}
	for name, tl := range map[string]*tally{"blpop": left, "brpop": right, "chat watch": chats, "queue work": jobs, "queue poll --wait": polled} {
		sent, _, lost, dups, strays := tl.counts()
		t.Logf("%s: %d sent, %d lost, %d duplicated, %d delivered but not sent", name, sent, lost, dups, strays)
		if lost > 0 || dups > 0 || strays > 0 || sent == 0 {
			t.Errorf("%s: %d sent, %d lost, %d duplicated, %d delivered but not sent", name, sent, lost, dups, strays)
		}
	}
	t.Logf("metrics --listen: %d scrapes answered (%d chatq_up 1, %d chatq_up 0), %d failed; %d of %d outages scraped chatq_up 0; chatq_up 1 again after %d of %d rounds",
		scrapes.up1+scrapes.up0, scrapes.up1, scrapes.up0, len(scrapes.failed), countNil(downScrapes), len(downScrapes), upAgain, restarts+1)
	for _, err := range scrapes.failed {
		t.Errorf("a scrape failed: %v", err)
	}
	for _, err := range downScrapes {
		if err != nil {
			t.Errorf("a scrape while the server was down: %v", err)
		}
	}
	if upAgain != restarts+1 || scrapes.up1 == 0 || len(downScrapes) == 0 {
		t.Errorf("metrics --listen: chatq_up 1 again after %d of %d rounds, %d scrapes said 1, %d outages scraped",
			upAgain, restarts+1, scrapes.up1, len(downScrapes))
	}
	t.Logf("watch's stderr: %s", watch.errOut.String())
	t.Logf("metrics' stderr: %s", metrics.errOut.String())
}

// scrapeCounts counts the scrapes of metrics --listen by their chatq_up,
// and keeps those that failed.
type scrapeCounts struct {
	mu       sync.Mutex
	up0, up1 int
	failed   []error
}

func (c *scrapeCounts) add(up float64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case err != nil:
		c.failed = append(c.failed, err)
	case up == 1:
		c.up1++
	default:
		c.up0++
	}
}

// scrapeUp scrapes url (a /metrics of chatq metrics --listen) and returns
// its chatq_up sample, or why there is none: the request failed, did not
// answer 200, or the answer has no chatq_up line. The timeout is a
// deadline for a hang, not a performance budget.
func scrapeUp(url string) (float64, error) { return scrapeUpAccept(url, "") }

// scrapeUpAccept is scrapeUp asking for a format (an Accept header, as
// Prometheus sends); it reads the whole answer, so that the connection is
// kept for the next scrape.
func scrapeUpAccept(url, accept string) (float64, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	c := http.Client{Timeout: time.Minute}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	up, found := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "chatq_up "); ok && !found {
			if up, err = strconv.ParseFloat(v, 64); err != nil {
				return 0, fmt.Errorf("GET %s: chatq_up %w", url, err)
			}
			found = true
		}
	}
	switch {
	case sc.Err() != nil:
		return 0, fmt.Errorf("GET %s: %w", url, sc.Err())
	case !found:
		return 0, fmt.Errorf("GET %s: no chatq_up sample", url)
	}
	return up, nil
}

// blockedIn counts the clients of rdb's server whose last command is cmd
// (CLIENT LIST, one client a line), or -1 when it cannot be read.
func blockedIn(rdb *redis.Client, cmd string) int {
	list, err := rdb.ClientList(context.Background()).Result()
	if err != nil {
		return -1
	}
	n := 0
	for _, line := range strings.Split(list, "\n") {
		for _, f := range strings.Fields(line) {
			if f == "cmd="+cmd {
				n++
			}
		}
	}
	return n
}

func countNil(errs []error) int {
	n := 0
	for _, err := range errs {
		if err == nil {
			n++
		}
	}
	return n
}

// restartCount is CHATQ_RESTARTS when set (a longer ride), else def.
func restartCount(t *testing.T, def int) int {
	v := os.Getenv("CHATQ_RESTARTS")
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("CHATQ_RESTARTS=%q: want a number of restarts, 1 or more", v)
	}
	return n
}
