package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// queue work rides out a blackholed server and cut connections while it
// waits: it says once it lost the server and once it is back, does not
// exit, and messages pushed meanwhile are handled once
// the server answers again (go-redis re-subscribes, which wakes the wait;
// a notification lost in the blackhole is made up for by the claim every
// delayq.RecheckInterval, not the end of the one-minute wait).
func TestWorkRidesOutAnOutage(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		pb, p := redistest.Proxied(t, b)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		q := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
		if err := q.Create(ctx, "q", delayq.Attributes{}); err != nil {
			t.Fatal(err)
		}
		push := func(body string) {
			t.Helper()
			if _, err := q.Push(ctx, "q", body, delayq.PushOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		push("a")
		var out, errOut syncBuffer
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
			}
		})
		done := make(chan int, 1)
		go func() {
			done <- runChatq(ctx, pb, "", &out, &errOut, "--timeout", "1s", "-o", "json",
				"queue", "work", "q", "--vt", "10s", "--", "sh", "-c", "cat >/dev/null")
		}()
		acked := func(n int) func() bool {
			return func() bool { return strings.Count(out.String(), `"acked":true`) == n }
		}
		waitFor(t, "the first job", acked(1))

		p.Blackhole(true)
		push("b") // its notification is lost with the blackhole
		// The next claim (at most delayq.RecheckInterval away) times out:
		// work says so once, and keeps trying.
		waitFor(t, "the loss reported", func() bool { return strings.Contains(errOut.String(), "lost the connection") })
		p.Blackhole(false)
		start := time.Now()
		waitFor(t, "the job pushed during the blackhole", acked(2))
		t.Logf("handled %v after the blackhole ended", time.Since(start))

		p.CutAll()
		push("c")
		start = time.Now()
		waitFor(t, "the job pushed as the connections were cut", acked(3))
		t.Logf("handled %v after the connections were cut", time.Since(start))

		waitFor(t, "the recovery reported", func() bool { return strings.Contains(errOut.String(), "reconnected after") })
		cancel()
		if code := <-done; code != 0 {
			t.Fatalf("work exited %d: %s", code, errOut.String())
		}
		if s, err := q.Stats(context.Background(), "q"); err != nil || s.Messages != 0 {
			t.Fatalf("left: %+v %v", s, err)
		}
		t.Logf("stderr:\n%s", errOut.String())
	})
}
