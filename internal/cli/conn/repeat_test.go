package conn

import (
	"context"
	"errors"
	"io"
	"syscall"
	"testing"
	"time"
)

// A lost reply is repeated until an answer comes; when the repeats only
// meet a refused connection, the error is still a lost reply (exit 4); an
// error that is not transient is not repeated.
func TestRepeat(t *testing.T) {
	ctx := t.Context()
	n := 0
	err := Repeat(ctx, time.Second, func(context.Context) error {
		if n++; n == 1 {
			return io.EOF
		}
		return nil
	})
	if err != nil || n != 2 {
		t.Errorf("after one lost reply: %v after %d tries, want nil after 2", err, n)
	}

	n = 0
	err = Repeat(ctx, 100*time.Millisecond, func(context.Context) error {
		if n++; n == 1 {
			return io.EOF
		}
		return syscall.ECONNREFUSED
	})
	if !ReplyLost(err) || n < 2 {
		t.Errorf("a lost reply, then refusals: %v after %d tries, want a lost reply", err, n)
	}

	// A lost reply, then an answer that is an error: the answer.
	n = 0
	missing := errors.New("missing")
	err = Repeat(ctx, time.Second, func(context.Context) error {
		if n++; n == 1 {
			return io.EOF
		}
		return missing
	})
	if err != missing || n != 2 {
		t.Errorf("a lost reply, then an error answer: %v after %d tries, want the answer after 2", err, n)
	}

	n = 0
	wrong := errors.New("WRONGTYPE")
	if err := Repeat(ctx, time.Second, func(context.Context) error { n++; return wrong }); err != wrong || n != 1 {
		t.Errorf("a refusal: %v after %d tries, want it after 1", err, n)
	}
}
