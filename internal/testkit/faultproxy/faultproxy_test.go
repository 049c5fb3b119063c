package faultproxy_test

import (
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/faultproxy"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// Each fault does what it says against a real protocol exchange: a dropped
// reply leaves the write applied, a dropped request leaves nothing, a
// blackhole times out until lifted, and a cut connection is redialled.
func TestFaults(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		pb, p := redistest.Proxied(t, b)
		c := redis.NewClient(&redis.Options{Addr: p.Addr(), ReadTimeout: 200 * time.Millisecond, MaxRetries: -1, DB: pb.Client.Options().DB})
		t.Cleanup(func() { c.Close() })
		key := b.Prefix + "k"
		if err := c.Set(ctx, key, "0", 0).Err(); err != nil {
			t.Fatal(err)
		}

		p.DropReplies(1)
		if err := c.Set(ctx, key, "applied", 0).Err(); !isTimeout(err) {
			t.Fatalf("dropped reply: got %v, want a timeout", err)
		}
		if v := b.Client.Get(ctx, key).Val(); v != "applied" {
			t.Errorf("dropped reply: the server has %q, want the write applied", v)
		}

		p.DropRequests(1)
		if err := c.Set(ctx, key, "never", 0).Err(); !isTimeout(err) {
			t.Fatalf("dropped request: got %v, want a timeout", err)
		}
		if v := b.Client.Get(ctx, key).Val(); v != "applied" {
			t.Errorf("dropped request: the server has %q, want it unchanged", v)
		}

		p.Blackhole(true)
		if err := c.Ping(ctx).Err(); !isTimeout(err) {
			t.Fatalf("blackhole: got %v, want a timeout", err)
		}
		p.Blackhole(false)
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatalf("after the blackhole: %v", err)
		}

		p.CutAll()
		var err error
		for range 3 { // the pool notices the cut connection on first use
			if err = c.Ping(ctx).Err(); err == nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("after a cut: %v", err)
		}
		if _, _, dq, dr := p.Counts(); dq < 2 || dr < 1 {
			t.Errorf("dropped %d requests and %d replies, want at least 2 and 1", dq, dr)
		}
	})
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// A connection whose client sent an exempt pattern is spared every fault:
// a replica's replication link through its master's proxy.
func TestExempt(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { _, _ = io.Copy(c, c) }() // echo
		}
	}()
	p, err := faultproxy.Start(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Exempt("psync")
	dial := func() net.Conn {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	spared, plain := dial(), dial()
	defer spared.Close()
	defer plain.Close()
	echo := func(c net.Conn, msg string) string {
		_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
		if _, err := c.Write([]byte(msg)); err != nil {
			return ""
		}
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(c, buf); err != nil {
			return ""
		}
		return string(buf)
	}
	if got := echo(spared, "PSYNC ? -1\r\n"); got != "PSYNC ? -1\r\n" {
		t.Fatalf("spared before the blackhole: %q", got)
	}
	p.Blackhole(true)
	if got := echo(spared, "x"); got != "x" {
		t.Errorf("the exempt connection was blackholed: %q", got)
	}
	if got := echo(plain, "y"); got != "" {
		t.Errorf("the blackhole let %q through", got)
	}
}
