package delayq_test

import (
	"errors"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// A push due further ahead than RSMQ's largest delay (9999999 s, about 115
// days after the server's now) is refused before anything is written.
func TestPushAtBeyondMaxDelay(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		c := newClient(t, b)
		mustCreate(t, c, "far", delayq.Attributes{})
		_, err := c.Push(ctx, "far", "x", delayq.PushOptions{At: time.Now().Add(200 * 24 * time.Hour)})
		if !errors.Is(err, delayq.ErrInvalid) || !errors.Is(err, delayq.ErrInvalid) {
			t.Fatalf("push 200 days ahead: %v, want ErrInvalidValue", err)
		}
		if st, err := c.Stats(ctx, "far"); err != nil || st.Messages != 0 || st.TotalSent != 0 {
			t.Fatalf("after a refused push: %+v, %v", st, err)
		}
		if _, err := c.Push(ctx, "far", "x", delayq.PushOptions{At: time.Now().Add(100 * 24 * time.Hour)}); err != nil {
			t.Fatalf("push 100 days ahead: %v", err)
		}
	})
}
