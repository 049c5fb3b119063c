package bench

import (
	"context"
	"io"
	"os"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/iostreams"
	"github.com/chatq-dev/chatq/internal/redistest"
)

func TestPercentileMs(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, tt := range []struct {
		q    float64
		want float64
	}{{0.5, 50}, {0.99, 99}, {1, 100}, {0, 1}} {
		if got := percentileMs(d, tt.q); got != tt.want {
			t.Errorf("q=%v: got %v, want %v", tt.q, got, tt.want)
		}
	}
	if got := percentileMs(nil, 0.5); got != 0 {
		t.Errorf("empty: got %v", got)
	}
}

// BenchmarkStep is the client's cost of one operation of each step, one
// client, as `chatq bench` runs it (chatq's client and hooks): the
// allocations per op, and, with -cpuprofile, where the client's CPU goes.
// On the embedded server unless CHATQ_TEST_REDIS_URL names a real one (use
// a real one to profile: the embedded server runs in this process).
func BenchmarkStep(b *testing.B) {
	be := redistest.Embedded(b)
	if os.Getenv("CHATQ_TEST_REDIS_URL") != "" {
		be = redistest.Real(b)
	}
	ctx := context.Background()
	cfg := &conn.Config{URL: be.URL, Timeout: 3 * time.Second}
	c, err := conn.NewClient(cfg, &iostreams.IOStreams{ErrOut: io.Discard}, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	o := &benchOptions{clients: 1, pipeline: 1, requests: 1, size: 16}
	for _, pattern := range []string{"ping", "list", "queue", "chat"} {
		steps, err := benchWorkloads()[pattern](ctx, c, be.Prefix+"b"+pattern+":", o)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range steps {
			if s.name == "poll" || s.name == "ack" || s.name == "pending" {
				continue // they need what an earlier step left
			}
			b.Run(pattern+"_"+s.name, func(b *testing.B) {
				op := s.worker(c, 0)
				b.ReportAllocs()
				for b.Loop() {
					if err := op(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
