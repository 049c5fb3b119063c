// Package keyspace finds and removes the keys under a chatq --prefix, for
// the demo, the benchmarks and the tests that run on a shared server.
package keyspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Quote escapes the SCAN MATCH wildcards in s so it matches itself.
func Quote(s string) string {
	return strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`, "]", `\]`).Replace(s)
}

// Pattern is the SCAN MATCH pattern for the keys that start with prefix.
func Pattern(prefix string) string { return Quote(prefix) + "*" }

// forEachNode calls fn on every master of a cluster, or on c itself.
func forEachNode(ctx context.Context, c redis.UniversalClient, fn func(context.Context, redis.UniversalClient) error) error {
	if cc, ok := c.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error { return fn(ctx, n) })
	}
	return fn(ctx, c)
}

// DeletePrefix deletes every key that starts with prefix, in batches.
func DeletePrefix(ctx context.Context, c redis.UniversalClient, prefix string) error {
	return forEachNode(ctx, c, func(ctx context.Context, n redis.UniversalClient) error {
		iter := n.Scan(ctx, 0, Pattern(prefix), 1000).Iterator()
		var batch []string
		flush := func() error {
			if len(batch) == 0 {
				return nil
			}
			// One key per call keeps a cluster node from refusing a
			// multi-slot UNLINK; a pipeline keeps it to one round trip.
			_, err := n.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, k := range batch {
					p.Unlink(ctx, k)
				}
				return nil
			})
			batch = batch[:0]
			return err
		}
		for iter.Next(ctx) {
			batch = append(batch, iter.Val())
			if len(batch) == 500 {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := iter.Err(); err != nil {
			return err
		}
		return flush()
	})
}

// AnyWithPrefix reports whether some key starts with prefix.
func AnyWithPrefix(ctx context.Context, c redis.UniversalClient, prefix string) (bool, error) {
	keys, err := Scan(ctx, c, Pattern(prefix), 1)
	return len(keys) > 0, err
}

// UniquePrefix returns a prefix no other run uses: name, cleaned to
// [A-Za-z0-9:-], and random hex, ending in ':'.
func UniquePrefix(name string) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	clean := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == ':' {
			return r
		}
		return '-'
	}, name)
	if len(clean) > 60 {
		clean = clean[:20] + clean[len(clean)-40:]
	}
	return clean + ":" + hex.EncodeToString(b[:]) + ":"
}

// Scan returns up to limit keys matching the SCAN MATCH pattern, from every
// master of a cluster or from c itself.
func Scan(ctx context.Context, c redis.UniversalClient, match string, limit int) ([]string, error) {
	var mu sync.Mutex
	var out []string
	err := forEachNode(ctx, c, func(ctx context.Context, n redis.UniversalClient) error {
		iter := n.Scan(ctx, 0, match, 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			full := len(out) >= limit
			if !full {
				out = append(out, iter.Val())
			}
			mu.Unlock()
			if full {
				break
			}
		}
		return iter.Err()
	})
	return out, err
}
