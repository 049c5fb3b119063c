package delayq_test

import (
	"context"
	"crypto/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

func backends(b *testing.B, fn func(b *testing.B, be redistest.Backend)) {
	b.Run("embedded", func(b *testing.B) { fn(b, redistest.Embedded(b)) })
	b.Run("redis", func(b *testing.B) { fn(b, redistest.Real(b)) })
}

// BenchmarkPush: one push, one round trip.
func BenchmarkPush(b *testing.B) {
	backends(b, func(b *testing.B, be redistest.Backend) {
		c := newClient(b, be)
		mustCreate(b, c, "q", delayq.Attributes{})
		ctx := context.Background()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := c.Push(ctx, "q", "a message of some 30 bytes....", delayq.PushOptions{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPushToken: a push with a token (as chatq queue push sends it),
// the cost of the record beside BenchmarkPush.
func BenchmarkPushToken(b *testing.B) {
	backends(b, func(b *testing.B, be redistest.Backend) {
		c := newClient(b, be)
		mustCreate(b, c, "q", delayq.Attributes{})
		ctx := context.Background()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := c.Push(ctx, "q", "a message of some 30 bytes....", delayq.PushOptions{Token: rand.Text()}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchPop pops b.N messages one at a time, each with a new token when
// token is set (as chatq queue poll --pop sends it); the pushes that fill
// the queue are outside the timer.
func benchPop(b *testing.B, token bool) {
	backends(b, func(b *testing.B, be redistest.Backend) {
		c := newClient(b, be)
		mustCreate(b, c, "q", delayq.Attributes{})
		ctx := context.Background()
		bodies := make([]string, b.N)
		for i := range bodies {
			bodies[i] = "a message of some 30 bytes...."
		}
		for len(bodies) > 0 {
			n := min(len(bodies), 100)
			if _, err := c.PushMany(ctx, "q", bodies[:n], delayq.PushManyOptions{}); err != nil {
				b.Fatal(err)
			}
			bodies = bodies[n:]
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			opt := delayq.ReceiveOptions{Pop: true}
			if token {
				opt.Token = rand.Text()
			}
			if m, err := c.Receive(ctx, "q", opt); err != nil || len(m) != 1 {
				b.Fatal(m, err)
			}
		}
	})
}

// BenchmarkPop: one pop, one round trip.
func BenchmarkPop(b *testing.B) { benchPop(b, false) }

// BenchmarkPopToken: a pop with a token, the cost of its record beside
// BenchmarkPop.
func BenchmarkPopToken(b *testing.B) { benchPop(b, true) }

// BenchmarkPollAck: receive one message and ack it, two round trips.
func BenchmarkPollAck(b *testing.B) {
	backends(b, func(b *testing.B, be redistest.Backend) {
		c := newClient(b, be)
		mustCreate(b, c, "q", delayq.Attributes{})
		ctx := context.Background()
		for i := 0; i < b.N; i++ {
			mustPush(b, c, "q", "a message of some 30 bytes....", delayq.PushOptions{})
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{})
			if err != nil || len(r) != 1 {
				b.Fatalf("receive: %v %v", r, err)
			}
			if _, err := c.Ack(ctx, "q", r[0].ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkPollAckReceipt: receive one message and ack it by its receipt,
// as Work does, two round trips.
func BenchmarkPollAckReceipt(b *testing.B) {
	backends(b, func(b *testing.B, be redistest.Backend) {
		c := newClient(b, be)
		mustCreate(b, c, "q", delayq.Attributes{})
		ctx := context.Background()
		for i := 0; i < b.N; i++ {
			mustPush(b, c, "q", "a message of some 30 bytes....", delayq.PushOptions{})
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{})
			if err != nil || len(r) != 1 {
				b.Fatalf("receive: %v %v", r, err)
			}
			if res, err := c.Ack(ctx, "q", r[0].Receipt); err != nil || res.Acked != 1 {
				b.Fatalf("ack: %v %v", res, err)
			}
		}
	})
}

// BenchmarkPushMany: 100 messages per call, one round trip; the time and
// the server's script time (INFO commandstats) are per message.
func BenchmarkPushMany(b *testing.B) {
	backends(b, func(b *testing.B, be redistest.Backend) {
		c := newClient(b, be)
		mustCreate(b, c, "q", delayq.Attributes{})
		ctx := context.Background()
		bodies := make([]string, 100)
		for i := range bodies {
			bodies[i] = "a message of some 30 bytes...."
		}
		usec := func() float64 {
			if !be.Real() {
				return 0
			}
			s := be.Client.Info(ctx, "commandstats").Val()
			_, rest, _ := strings.Cut(s, "cmdstat_evalsha:")
			_, rest, _ = strings.Cut(rest, "usec=")
			v, _, _ := strings.Cut(rest, ",")
			f, _ := strconv.ParseFloat(v, 64)
			return f
		}
		before := usec()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := c.PushMany(ctx, "q", bodies, delayq.PushManyOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(bodies)), "ns/msg")
		if be.Real() {
			b.ReportMetric((usec()-before)*1000/float64(b.N*len(bodies)), "server-ns/msg")
		}
	})
}
