package conn

import (
	"context"
	"fmt"
	"time"
)

// Repeat runs op, a call that carries a client-chosen token and so may be
// sent again whatever became of the first try (the server applies a token
// once and answers a repeat with the first answer). After a lost reply or
// a failed connection it runs op again, with jittered backoff, until op
// gets an answer, another error comes, ctx ends, or budget (--timeout) has
// passed since the first failure. When a reply was lost and no later try
// got an answer, the error returned is still a lost reply (ReplyLost), so
// that the command exits 4: the server may have applied it. A later try's
// error reply is an answer, and is returned as it is.
func Repeat(ctx context.Context, budget time.Duration, op func(context.Context) error) error {
	err := op(ctx)
	if err == nil || !Transient(err) || ctx.Err() != nil {
		return err
	}
	var lost error
	if ReplyLost(err) {
		lost = err
	}
	b := retryHook{budget: budget}.backoff(ctx)
	for Transient(err) && ctx.Err() == nil && b.wait(ctx) {
		err = op(ctx)
		if err == nil {
			return nil
		}
		if lost == nil && ReplyLost(err) {
			lost = err
		}
	}
	// A repeat that got an answer, even an error reply (the call's
	// record says what the first try did), settles it; one that met only
	// a refused connection leaves the reply lost.
	if lost != nil && !ReplyLost(err) && Transient(err) {
		return &repeatedError{lost: lost, last: err}
	}
	return err
}

// repeatedError is a lost reply whose repeats failed otherwise (a refused
// connection): it is the lost reply for errors.Is/As, and says both.
type repeatedError struct{ lost, last error }

func (e *repeatedError) Error() string {
	return fmt.Sprintf("%v (sent again: %v)", e.lost, e.last)
}
func (e *repeatedError) Unwrap() error { return e.lost }

// Tries tells a call with a token made for it, run by Repeat or by a
// persistent loop, whether this is its first try: the packages' FirstTry
// then skips looking up the token's record (it was never sent, so none
// can exist), and every later try, whatever became of the first, looks.
// The zero value is ready; one per token.
type Tries struct{ n int }

// First counts a try and reports whether it is the first.
func (t *Tries) First() bool {
	t.n++
	return t.n == 1
}
