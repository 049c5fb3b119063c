package iostreams

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

// Data passes through unchanged, in any read sizes.
func TestInterruptiblePassesData(t *testing.T) {
	want := strings.Repeat("line of input\n", 5000)
	r := Interruptible(context.Background(), strings.NewReader(want))
	var b strings.Builder
	p := make([]byte, 7)
	for {
		n, err := r.Read(p[:1+len(b.String())%7])
		b.Write(p[:n])
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if b.String() != want {
		t.Fatalf("read %d bytes, want %d", b.Len(), len(want))
	}
}

// A read blocked on input that never comes (an open pipe) ends with the
// context's error once it is cancelled, and every later read too.
func TestInterruptibleEndsBlockedRead(t *testing.T) {
	pr, pw := io.Pipe()
	defer pw.Close()
	ctx, cancel := context.WithCancel(context.Background())
	r := Interruptible(ctx, pr)
	done := make(chan error, 1)
	go func() {
		_, err := r.Read(make([]byte, 10))
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("read: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second): // a deadline, not a wait: the read ends at once
		t.Fatal("the blocked read did not end with the context")
	}
	if _, err := r.Read(make([]byte, 10)); !errors.Is(err, context.Canceled) {
		t.Fatalf("a later read: %v", err)
	}
}
