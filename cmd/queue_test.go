package cmd

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// runQueue runs a chatq command line against backend b with fake streams.
func runQueue(t *testing.T, b redistest.Backend, tty bool, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	io := &iostreams.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut, OutTTY: tty, ErrTTY: tty}
	full := append([]string{"--url", b.URL, "--prefix", b.Prefix}, args...)
	code = Run(context.Background(), full, io, func(string) string { return "" })
	return code, out.String(), errOut.String()
}

// On a terminal, tables are aligned with a header and success is said on
// stderr; piped, rows are tab-separated without a header and nothing is
// said.
func TestQueueTerminalAndPiped(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		if code, _, errOut := runQueue(t, b, true, "", "queue", "create", "jobs"); code != 0 || !strings.Contains(errOut, "chatq: created queue jobs") {
			t.Fatalf("create on a terminal: %d %q", code, errOut)
		}
		if code, out, errOut := runQueue(t, b, false, "", "queue", "create", "other"); code != 0 || out != "" || errOut != "" {
			t.Fatalf("create piped: %d %q %q", code, out, errOut)
		}
		if code, out, _ := runQueue(t, b, false, "body\twith tab\n", "queue", "push", "jobs", "-"); code != 0 || len(strings.TrimSpace(out)) != 32 {
			t.Fatalf("push: %d %q", code, out)
		}
		code, out, _ := runQueue(t, b, true, "", "queue", "peek", "jobs")
		if code != 0 || !strings.HasPrefix(out, "ID ") || !strings.Contains(out, "STATE") || !strings.Contains(out, `body\twith tab`) {
			t.Fatalf("peek on a terminal: %d %q", code, out)
		}
		code, out, _ = runQueue(t, b, false, "", "queue", "poll", "jobs")
		if fields := strings.Split(strings.TrimSuffix(out, "\n"), "\t"); code != 0 || len(fields) != 3 || fields[1] != "1" || fields[2] != `body\twith tab` {
			t.Fatalf("poll piped: %d %q", code, out)
		}
		code, out, _ = runQueue(t, b, true, "", "queue", "stats", "jobs")
		if code != 0 || !strings.HasPrefix(out, "FIELD ") || !strings.Contains(out, "inflight      1") {
			t.Fatalf("stats on a terminal: %d %q", code, out)
		}
		code, out, _ = runQueue(t, b, true, "", "queue", "ls")
		if code != 0 || out != "NAME\njobs\nother\n" {
			t.Fatalf("ls on a terminal: %d %q", code, out)
		}
	})
}

// A body another client stored that is not UTF-8 is shown without loss:
// message_base64 carries its bytes, and the text output is byte-exact.
func TestQueueInvalidUTF8FromOthers(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		if code, _, _ := runQueue(t, b, false, "", "queue", "create", "jobs"); code != 0 {
			t.Fatal("create")
		}
		id := "hof4t1hhvzVUNc2FrHjrE9F1MkgGyiZB"
		b.Client.ZAdd(ctx, b.Prefix+"rsmq:jobs", redis.Z{Score: 1, Member: id})
		b.Client.HSet(ctx, b.Prefix+"rsmq:jobs:Q", id, "caf\xe9")
		code, out, _ := runQueue(t, b, false, "", "-o", "json", "queue", "peek", "jobs")
		if code != 0 || !strings.Contains(out, "\"message\":\"caf\ufffd\"") || !strings.Contains(out, `"message_base64":"Y2Fm6Q=="`) {
			t.Fatalf("peek -o json: %d %s", code, out)
		}
		code, out, _ = runQueue(t, b, false, "", "queue", "poll", "jobs", "--pop")
		if code != 0 || !strings.HasSuffix(out, "\tcaf\xe9\n") {
			t.Fatalf("poll piped: %d %q", code, out)
		}
		// chatq itself refuses to push such a body.
		if code, _, errOut := runQueue(t, b, false, "caf\xe9", "queue", "push", "jobs", "-"); code != 2 || !strings.Contains(errOut, "not valid UTF-8") {
			t.Fatalf("push of Latin-1: %d %q", code, errOut)
		}
		// A valid body has no message_base64.
		runQueue(t, b, false, "", "queue", "push", "jobs", "plain")
		if _, out, _ := runQueue(t, b, false, "", "-o", "json", "queue", "peek", "jobs"); strings.Contains(out, "message_base64") {
			t.Fatalf("peek of a UTF-8 body: %s", out)
		}
	})
}

// When an rsmq client received from a queue, stats rebuilds chatq's index
// and the split is exact again; --no-reindex reports it as it is.
func TestQueueStatsReindex(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		runQueue(t, b, false, "", "queue", "create", "jobs")
		_, out, _ := runQueue(t, b, false, "", "queue", "push", "jobs", "x")
		id := strings.TrimSpace(out)
		runQueue(t, b, false, "", "queue", "push", "jobs", "y")
		// What rsmq's receiveMessage does.
		k := b.Prefix + "rsmq:jobs"
		b.Client.ZAdd(ctx, k, redis.Z{Score: 9e12, Member: id})
		b.Client.HIncrBy(ctx, k+":Q", "totalrecv", 1)
		b.Client.HSet(ctx, k+":Q", id+":rc", 1, id+":fr", 1)
		code, out, errOut := runQueue(t, b, false, "", "-o", "json", "queue", "stats", "jobs", "--no-reindex")
		if code != 0 || !strings.Contains(out, `"split_exact":false`) || !strings.Contains(errOut, "may be off") {
			t.Fatalf("stats --no-reindex: %d %s %s", code, out, errOut)
		}
		code, out, errOut = runQueue(t, b, false, "", "-o", "json", "queue", "stats", "jobs")
		if code != 0 || !strings.Contains(out, `"split_exact":true`) || !strings.Contains(out, `"inflight":1,`) || errOut != "" {
			t.Fatalf("stats: %d %s %q", code, out, errOut)
		}
	})
}
