// Package redistest runs the same test on the two backends chatq supports:
// the embedded server (always) and a real redis-server named by
// CHATQ_TEST_REDIS_URL. With CHATQ_REQUIRE_REDIS=1 a missing real server
// fails the test instead of skipping it.
package redistest

import (
	"context"
	"net/url"
	"os"
	"testing"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/cli/embedded"
	"github.com/chatq-dev/chatq/internal/testkit/faultproxy"
	"github.com/redis/go-redis/v9"
)

// Backend is a server a test runs against, with a key prefix of its own.
type Backend struct {
	Name   string // "embedded" or "redis"
	URL    string
	Client *redis.Client
	Prefix string
}

// Real reports whether this is a real redis-server.
func (b Backend) Real() bool { return b.Name == "redis" }

// Run calls fn as a subtest on each backend.
func Run(t *testing.T, fn func(t *testing.T, b Backend)) {
	t.Helper()
	t.Run("embedded", func(t *testing.T) { fn(t, Embedded(t)) })
	t.Run("redis", func(t *testing.T) { fn(t, Real(t)) })
}

// Embedded starts a fresh embedded server for t. Its prefix is non-empty so
// every test also exercises prefixing.
func Embedded(t testing.TB) Backend {
	t.Helper()
	s, err := embedded.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("embedded server: %v", err)
	}
	t.Cleanup(s.Close)
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	t.Cleanup(func() { c.Close() })
	return Backend{Name: "embedded", URL: s.URL(), Client: c, Prefix: "t:"}
}

// Real connects to CHATQ_TEST_REDIS_URL under a unique prefix and deletes
// the prefix's keys when t ends. It skips t when no server is named, or fails
// it when CHATQ_REQUIRE_REDIS=1.
func Real(t testing.TB) Backend {
	t.Helper()
	url := realURL(t)
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatalf("CHATQ_TEST_REDIS_URL: %v", err)
	}
	c := redis.NewClient(opt)
	prefix := keyspace.UniquePrefix("chatqtest:" + t.Name())
	t.Cleanup(func() {
		if err := keyspace.DeletePrefix(context.Background(), c, prefix); err != nil {
			t.Errorf("cleanup of %s*: %v", prefix, err)
		}
		c.Close()
	})
	return Backend{Name: "redis", URL: url, Client: c, Prefix: prefix}
}

// realURL returns CHATQ_TEST_REDIS_URL, skipping or failing t when unset.
func realURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("CHATQ_TEST_REDIS_URL")
	if url == "" {
		if os.Getenv("CHATQ_REQUIRE_REDIS") == "1" {
			t.Fatal("CHATQ_REQUIRE_REDIS=1 but CHATQ_TEST_REDIS_URL is not set")
		}
		t.Skip("CHATQ_TEST_REDIS_URL not set: no real Redis to test against")
	}
	return url
}

// Proxied returns b reached through a fault-injecting proxy (see
// internal/testkit/faultproxy), closed when t ends: its URL and Client go through
// the proxy, its Prefix is b's.
func Proxied(t testing.TB, b Backend) (Backend, *faultproxy.Proxy) {
	t.Helper()
	u, err := url.Parse(b.URL)
	if err != nil {
		t.Fatalf("backend URL: %v", err)
	}
	p, err := faultproxy.Start(u.Host)
	if err != nil {
		t.Fatalf("fault proxy: %v", err)
	}
	t.Cleanup(func() { _ = p.Close() })
	u.Host = p.Addr()
	opt, err := redis.ParseURL(u.String())
	if err != nil {
		t.Fatalf("proxied URL: %v", err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { c.Close() })
	return Backend{Name: b.Name, URL: u.String(), Client: c, Prefix: b.Prefix}, p
}

// Stopped returns a client of a server that has stopped, and the URL the
// server had: every call fails to connect, without retries.
func Stopped(t testing.TB) (*redis.Client, string) {
	t.Helper()
	s, err := embedded.Start("127.0.0.1:0")
	if err != nil {
		t.Fatalf("embedded server: %v", err)
	}
	addr, url := s.Addr(), s.URL()
	s.Close()
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	t.Cleanup(func() { c.Close() })
	return c, url
}
