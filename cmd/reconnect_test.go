package cmd

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// waitFor polls cond until it holds, failing t after a generous deadline
// (a deadline for a hang, not a performance budget).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ownServer returns a backend on a redis-server of the test's own, which the
// test may kill, restart and start again on the same data (AOF, fsync
// always).
func ownServer(t *testing.T) (redistest.Backend, *redistest.Server) {
	s := redistest.StartServer(t)
	return redistest.Backend{Name: "redis", URL: s.URL(), Client: s.Client(), Prefix: "t:"}, s
}

// chat watch rides out a server restart: it says it lost and regained the
// connection, and prints every message exactly once, before and after.
func TestWatchRidesOutARestart(t *testing.T) {
	b, s := ownServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if code, _, stderr := run(ctx, b, "chat", "create", "--from", "joe", "--to", "jeff", "before"); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runChatq(ctx, b, "", &out, &errOut, "chat", "watch", "jeff", "--poll", "100ms")
	}()
	waitFor(t, "the first message", func() bool { return strings.Contains(out.String(), "before") })

	for round := range 3 {
		if round == 1 {
			// Down long enough for watch to notice: it says so, and
			// says so once however long the outage.
			s.Kill()
			waitFor(t, "the loss reported", func() bool { return strings.Contains(errOut.String(), "lost the connection") })
			time.Sleep(500 * time.Millisecond) // the outage goes on (several reconnect attempts)
			s.Start()
		} else {
			s.Restart()
		}
		body := "after-" + string(rune('a'+round))
		waitFor(t, "a send after the restart", func() bool {
			code, _, _ := run(ctx, b, "chat", "send", "1", "--from", "joe", body)
			return code == 0
		})
		waitFor(t, body+" printed", func() bool { return strings.Contains(out.String(), body) })
	}
	waitFor(t, "the recovery reported", func() bool {
		return strings.Count(errOut.String(), "reconnected after") == strings.Count(errOut.String(), "lost the connection")
	})
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("watch exited %d after an interrupt, want 0: %s", code, errOut.String())
	}
	for _, body := range []string{"before", "after-a", "after-b", "after-c"} {
		if n := strings.Count(out.String(), body); n != 1 {
			t.Errorf("%q printed %d times, want once:\n%s", body, n, out.String())
		}
	}
	if n := strings.Count(errOut.String(), "lost the connection"); n < 1 || n > 3 {
		t.Errorf("said it lost the connection %d times over 3 restarts:\n%s", n, errOut.String())
	}
	t.Logf("stderr:\n%s", errOut.String())
	if strings.Contains(errOut.String(), "error:") {
		t.Errorf("stderr: %s", errOut.String())
	}
}

// chat watch rides out a Cluster failover: the master of the chat's slot is
// killed, its replica takes over, and every message is printed once.
func TestWatchRidesOutAClusterFailover(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	cl := []string{"--cluster"}
	b := redistest.Backend{Name: "cluster", URL: c.URL(), Prefix: "t:"}
	if code, _, stderr := run(ctx, b, append(cl, "chat", "create", "--from", "joe", "--to", "jeff", "before")...); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runChatq(ctx, b, "", &out, &errOut, append(cl, "chat", "watch", "jeff", "--poll", "100ms")...)
	}()
	waitFor(t, "the first message", func() bool { return strings.Contains(out.String(), "before") })
	c.WaitReplicated(t)
	c.MasterOf(t, "t:msgs:{1}").Kill()
	c.WaitHealthy(t)
	var lastErr string
	defer func() {
		if t.Failed() {
			t.Logf("last send: %s\nwatch's stderr: %s", lastErr, errOut.String())
		}
	}()
	waitFor(t, "a send after the failover", func() bool {
		code, _, stderr := run(ctx, b, append(cl, "chat", "send", "1", "--from", "joe", "after")...)
		lastErr = stderr
		return code == 0
	})
	waitFor(t, "after printed", func() bool { return strings.Contains(out.String(), "after") })
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("watch exited %d after an interrupt, want 0: %s", code, errOut.String())
	}
	for _, body := range []string{"before", "after"} {
		if n := strings.Count(out.String(), body); n != 1 {
			t.Errorf("%q printed %d times, want once:\n%s", body, n, out.String())
		}
	}
	t.Logf("stderr:\n%s", errOut.String())
}

// list blpop waits through a restart and pops what is pushed after it.
func TestBlockingPopRidesOutARestart(t *testing.T) {
	b, s := ownServer(t)
	ctx := t.Context()
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- runChatq(ctx, b, "", &out, &errOut, "list", "blpop", "jobs", "--wait", "0") }()
	waitFor(t, "the pop blocked", func() bool {
		n, err := s.Client().ClientList(ctx).Result()
		return err == nil && strings.Contains(n, "cmd=blmove")
	})
	s.Kill()
	waitFor(t, "the loss reported", func() bool { return strings.Contains(errOut.String(), "lost the connection") })
	s.Start()
	waitFor(t, "a push after the restart", func() bool {
		code, _, _ := run(ctx, b, "list", "rpush", "jobs", "after")
		return code == 0
	})
	select {
	case code := <-done:
		if code != 0 || out.String() != "after\n" {
			t.Errorf("blpop: exit %d, stdout %q, stderr:\n%s", code, out.String(), errOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("blpop did not return the item pushed after the restart; stderr:\n%s", errOut.String())
	}
	if !strings.Contains(errOut.String(), "reconnected after") {
		t.Errorf("stderr: %s", errOut.String())
	}
}

// queue poll --wait waits through a restart and receives what is pushed
// after it.
func TestPollWaitRidesOutARestart(t *testing.T) {
	b, s := ownServer(t)
	ctx := t.Context()
	if code, _, stderr := run(ctx, b, "queue", "create", "jobs"); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() { done <- runChatq(ctx, b, "", &out, &errOut, "queue", "poll", "jobs", "--wait", "60s") }()
	waitFor(t, "the poll subscribed", func() bool {
		n, err := s.Client().PubSubNumSub(ctx, "t:rsmq:rt:jobs").Result()
		return err == nil && n["t:rsmq:rt:jobs"] > 0
	})
	s.Kill()
	waitFor(t, "the loss reported", func() bool { return strings.Contains(errOut.String(), "lost the connection") })
	s.Start()
	waitFor(t, "a push after the restart", func() bool {
		code, _, _ := run(ctx, b, "queue", "push", "jobs", "after")
		return code == 0
	})
	select {
	case code := <-done:
		if code != 0 || !strings.Contains(out.String(), "after") {
			t.Errorf("poll: exit %d, stdout %q, stderr:\n%s", code, out.String(), errOut.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("poll did not receive the message pushed after the restart; stderr:\n%s", errOut.String())
	}
}

// blpop, poll --wait and work ride out a Cluster failover: the master of
// each one's slot is killed in turn, its replica takes over, and each gets
// what is pushed after.
func TestLongRunningRideOutClusterFailovers(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	b := redistest.Backend{Name: "cluster", URL: c.URL(), Prefix: "t:"}
	cl := func(args ...string) []string { return append([]string{"--cluster"}, args...) }
	for _, q := range []string{"polled", "worked"} {
		if code, _, stderr := run(ctx, b, cl("queue", "create", q)...); code != 0 {
			t.Fatalf("create %s: %d %s", q, code, stderr)
		}
	}
	type job struct {
		name     string
		args     []string
		slotKey  string
		push     []string
		out, err syncBuffer
		done     chan int
	}
	jobs := []*job{
		{name: "blpop", args: cl("list", "blpop", "items", "--wait", "0"), slotKey: "t:{items}:first",
			push: cl("list", "rpush", "items", "after-blpop")},
		{name: "poll", args: cl("queue", "poll", "polled", "--wait", "120s"), slotKey: "t:rsmq:{polled}",
			push: cl("queue", "push", "polled", "after-poll")},
		{name: "work", args: cl("-o", "json", "queue", "work", "worked", "--", "sh", "-c", "cat >/dev/null"), slotKey: "t:rsmq:{worked}",
			push: cl("queue", "push", "worked", "after-work")},
	}
	for _, j := range jobs {
		j.done = make(chan int, 1)
		go func() { j.done <- runChatq(ctx, b, "", &j.out, &j.err, j.args...) }()
	}
	for _, j := range jobs {
		c.WaitReplicated(t)
		killed := c.MasterOf(t, j.slotKey)
		killed.Kill()
		c.WaitHealthy(t)

		waitFor(t, "a push after the failover ("+j.name+")", func() bool {
			code, _, _ := run(ctx, b, j.push...)
			return code == 0
		})
		want := j.push[len(j.push)-1]
		if j.name == "work" {
			want = `"acked":true`
		}
		waitFor(t, j.name+" got "+want, func() bool { return strings.Contains(j.out.String(), want) })
		// It comes back as a replica of the master that replaced it, so
		// that the next failover has a replica to promote.
		killed.Start()
		t.Logf("%s stderr:\n%s", j.name, j.err.String())
	}
	cancel()
	for _, j := range jobs {
		select {
		case <-j.done:
		case <-time.After(30 * time.Second):
			t.Errorf("%s did not end on interrupt", j.name)
		}
		if strings.Contains(j.err.String(), "error:") {
			t.Errorf("%s: %s", j.name, j.err.String())
		}
	}
}

// queue work rides out a restart: the job pushed after it is handled and
// acked.
func TestWorkRidesOutARestart(t *testing.T) {
	b, s := ownServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	if code, _, stderr := run(ctx, b, "queue", "create", "jobs"); code != 0 {
		t.Fatalf("create: %d %s", code, stderr)
	}
	var out, errOut syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runChatq(ctx, b, "", &out, &errOut, "-o", "json", "queue", "work", "jobs", "--", "sh", "-c", "cat >/dev/null")
	}()
	waitFor(t, "work subscribed", func() bool {
		n, err := s.Client().PubSubNumSub(ctx, "t:rsmq:rt:jobs").Result()
		return err == nil && n["t:rsmq:rt:jobs"] > 0
	})
	s.Kill()
	waitFor(t, "the loss reported", func() bool { return strings.Contains(errOut.String(), "lost the connection") })
	s.Start()
	waitFor(t, "a push after the restart", func() bool {
		code, _, _ := run(ctx, b, "queue", "push", "jobs", "after")
		return code == 0
	})
	waitFor(t, "the job acked", func() bool { return strings.Contains(out.String(), `"acked":true`) })
	cancel()
	<-done
	if n := strings.Count(out.String(), `"acked":true`); n != 1 {
		t.Errorf("%d jobs acked, want 1:\n%s", n, out.String())
	}
	if code, stdout, _ := run(t.Context(), b, "queue", "stats", "jobs", "-o", "json"); code != 0 || !strings.Contains(stdout, `"msgs":0`) {
		t.Errorf("after the job: %d %s", code, stdout)
	}
}

// chat watch, list blpop, queue poll --wait and queue work ride out a
// Sentinel failover: the replica is promoted while they run, and each gets
// what is written after, once.
func TestLongRunningRideOutASentinelFailover(t *testing.T) {
	s := redistest.StartSentinel(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	b := redistest.Backend{Name: "sentinel", URL: "redis://" + s.Addr, Prefix: "t:"}
	sm := func(args ...string) []string { return append([]string{"--sentinel-master", s.Name}, args...) }
	for _, setup := range [][]string{
		{"queue", "create", "polled"}, {"queue", "create", "worked"},
		{"chat", "create", "--from", "joe", "--to", "jeff", "before"},
	} {
		if code, _, stderr := run(ctx, b, sm(setup...)...); code != 0 {
			t.Fatalf("%v: %d %s", setup, code, stderr)
		}
	}
	type job struct {
		args     []string
		push     []string
		want     string
		out, err syncBuffer
		done     chan int
	}
	jobs := []*job{
		{args: sm("chat", "watch", "jeff", "--poll", "100ms"), push: sm("chat", "send", "1", "--from", "joe", "after-watch"), want: "after-watch"},
		{args: sm("list", "blpop", "items", "--wait", "0"), push: sm("list", "rpush", "items", "after-blpop"), want: "after-blpop"},
		{args: sm("queue", "poll", "polled", "--wait", "120s"), push: sm("queue", "push", "polled", "after-poll"), want: "after-poll"},
		{args: sm("-o", "json", "queue", "work", "worked", "--", "sh", "-c", "cat >/dev/null"), push: sm("queue", "push", "worked", "after-work"), want: `"acked":true`},
	}
	for _, j := range jobs {
		j.done = make(chan int, 1)
		go func() { j.done <- runChatq(ctx, b, "", &j.out, &j.err, j.args...) }()
	}
	waitFor(t, "watch printed the first message", func() bool { return strings.Contains(jobs[0].out.String(), "before") })
	s.Failover(t)
	for _, j := range jobs {
		waitFor(t, "a push after the failover", func() bool {
			code, _, _ := run(ctx, b, j.push...)
			return code == 0
		})
	}
	for _, j := range jobs {
		waitFor(t, j.want, func() bool { return strings.Contains(j.out.String(), j.want) })
		if n := strings.Count(j.out.String(), j.want); n != 1 {
			t.Errorf("%q %d times, want once: %s", j.want, n, j.out.String())
		}
	}
	cancel()
	for _, j := range jobs {
		<-j.done
		if strings.Contains(j.err.String(), "error:") {
			t.Errorf("%v: %s", j.args, j.err.String())
		}
	}
}
