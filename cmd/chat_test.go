package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
)

// syncBuffer is a bytes.Buffer safe to read while a command writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// runChatq runs one chatq command line in process against b.
func runChatq(ctx context.Context, b redistest.Backend, stdin string, out, errOut *syncBuffer, args ...string) int {
	io := &iostreams.IOStreams{In: strings.NewReader(stdin), Out: out, ErrOut: errOut}
	full := append([]string{"--url", b.URL, "--prefix", b.Prefix}, args...)
	return Run(ctx, full, io, func(string) string { return "" })
}

// A message of almost chat.MaxMessageBytes from stdin comes back byte for
// byte, but its final line ending (the stdin rule).
func TestChatSendStdinMiB(t *testing.T) {
	body := strings.Repeat("0123456789abcdef😀\n\"\\/", (chat.MaxMessageBytes-1)/24)
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		var out, errOut syncBuffer
		if code := runChatq(ctx, b, "", &out, &errOut, "chat", "create", "--from", "joe", "--to", "jeff"); code != 0 {
			t.Fatalf("create exited %d: %s", code, errOut.String())
		}
		if code := runChatq(ctx, b, body+"\n", &out, &errOut, "chat", "send", "1", "--from", "joe", "-"); code != 0 {
			t.Fatalf("send exited %d: %s", code, errOut.String())
		}
		out = syncBuffer{}
		if code := runChatq(ctx, b, "", &out, &errOut, "-o", "json", "chat", "pending", "jeff"); code != 0 {
			t.Fatalf("pending exited %d: %s", code, errOut.String())
		}
		var got []chat.ChatMessages
		if err := json.Unmarshal([]byte(out.String()), &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || len(got[0].Messages) != 1 || got[0].Messages[0].Message != body {
			t.Fatalf("the %d-byte message did not come back byte for byte", len(body))
		}
	})
}

// TestChatWatchInterrupted: interrupting watch (the context Main cancels on
// Ctrl-C) exits 0 after printing what it has.
func TestChatWatchInterrupted(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		var out, errOut syncBuffer
		if code := runChatq(ctx, b, "", &out, &errOut, "chat", "create", "--from", "joe", "--to", "jeff", "one\ttab"); code != 0 {
			t.Fatalf("create exited %d: %s", code, errOut.String())
		}
		out = syncBuffer{}
		wctx, interrupt := context.WithCancel(ctx)
		done := make(chan int, 1)
		var wout syncBuffer
		go func() { done <- runChatq(wctx, b, "", &wout, &errOut, "chat", "watch", "jeff") }()
		if code := runChatq(ctx, b, "", &out, &errOut, "chat", "send", "1", "--from", "joe", "two\nlines"); code != 0 {
			t.Fatalf("send exited %d: %s", code, errOut.String())
		}
		want := "1\t1\tjoe\tone\\ttab\n1\t2\tjoe\ttwo\\nlines\n"
		deadline := time.Now().Add(10 * time.Second)
		for wout.String() != want && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		interrupt()
		if code := <-done; code != 0 {
			t.Fatalf("watch exited %d after interrupt: %s", code, errOut.String())
		}
		if got := wout.String(); got != want {
			t.Fatalf("watch printed %q, want %q", got, want)
		}
	})
}

// TestPendingOneConnection: chat pending reads the user's chats, then
// pipelines a script per chat; both go out on the one connection it dialled
// (go-redis's separate pipeline pool, which would dial a second, is off).
func TestPendingOneConnection(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		var out, errOut syncBuffer
		for _, to := range []string{"jeff", "jeff,jim"} {
			if code := runChatq(ctx, b, "", &out, &errOut, "chat", "create", "--from", "joe", "--to", to, "hi"); code != 0 {
				t.Fatalf("create exited %d: %s", code, errOut.String())
			}
		}
		errOut = syncBuffer{}
		if code := runChatq(ctx, b, "", &out, &errOut, "--verbose", "chat", "pending", "jeff"); code != 0 {
			t.Fatalf("pending exited %d: %s", code, errOut.String())
		}
		log := errOut.String()
		if n := strings.Count(log, "chatq: dial "); n != 1 || !strings.Contains(log, "pipeline of 2") {
			t.Errorf("pending dialled %d connections (want 1) or sent no pipeline of 2:\n%s", n, log)
		}
	})
}
