// Package keyspace finds and removes the keys under a chatq --prefix, for
// the demo, the benchmarks and the tests that run on a shared server.
package keyspace

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sort"
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

// A cursor of ScanPage on a cluster: the top bits number the master, the
// others are that master's SCAN cursor.
const (
	nodeShift = 48
	nodeMask  = 1<<nodeShift - 1
)

// ScanPage is one SCAN call of a listing that pages through every key
// matching match, go-redis SCAN style: start with cursor 0 and call again
// with the cursor returned until it is 0. On a cluster the listing goes
// master by master (in address order), one SCAN of one master per call:
// the cursor's top 16 bits number the master, the rest is its SCAN
// cursor. As with SCAN itself, a key present during the whole listing is
// returned at least once; a change of the cluster's masters between calls
// may skip or repeat keys.
func ScanPage(ctx context.Context, c redis.UniversalClient, cursor uint64, match string, count int64) ([]string, uint64, error) {
	return ScanTypePage(ctx, c, cursor, match, count, "")
}

// ScanTypePage is ScanPage of the keys of one type (SCAN's TYPE option,
// Redis 6.0 and later), "" for every type: the server filters, so a page
// holds only keys of that type while each call still examines about count
// keys.
func ScanTypePage(ctx context.Context, c redis.UniversalClient, cursor uint64, match string, count int64, keyType string) ([]string, uint64, error) {
	scan := func(n redis.UniversalClient, cursor uint64) *redis.ScanCmd {
		if keyType == "" {
			return n.Scan(ctx, cursor, match, count)
		}
		return n.ScanType(ctx, cursor, match, count, keyType)
	}
	cc, ok := c.(*redis.ClusterClient)
	if !ok {
		return scan(c, cursor).Result()
	}
	nodes, err := masters(ctx, cc)
	if err != nil {
		return nil, 0, err
	}
	i := int(cursor >> nodeShift)
	if i >= len(nodes) {
		return nil, 0, nil // fewer masters than when the listing began
	}
	keys, next, err := scan(nodes[i], cursor&nodeMask).Result()
	switch {
	case err != nil:
		return nil, 0, err
	case next > nodeMask:
		return nil, 0, fmt.Errorf("SCAN cursor %d of %s does not fit in a cluster listing's cursor", next, nodes[i].Options().Addr)
	case next != 0:
		return keys, uint64(i)<<nodeShift | next, nil
	case i+1 < len(nodes):
		return keys, uint64(i+1) << nodeShift, nil
	}
	return keys, 0, nil
}

// masters returns the cluster's masters in address order. It makes no
// call once the client knows the cluster's slots.
func masters(ctx context.Context, cc *redis.ClusterClient) ([]*redis.Client, error) {
	var mu sync.Mutex
	var nodes []*redis.Client
	err := cc.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		nodes = append(nodes, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(nodes) >= 1<<(64-nodeShift) {
		return nil, fmt.Errorf("%d masters: too many for a cluster listing's cursor", len(nodes))
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Options().Addr < nodes[j].Options().Addr })
	return nodes, nil
}

// Names returns the distinct names that keys (SCAN replies) hold between
// prefix+head and tail, in their order, keeping those valid says are.
func Names(keys []string, prefix, head string, tail func(string) bool, valid func(string) bool) []string {
	var out []string
	seen := map[string]bool{}
	for _, k := range keys {
		rest, ok := strings.CutPrefix(k, prefix+head)
		if !ok {
			continue
		}
		i := strings.IndexByte(rest, '}')
		if i < 0 || !tail(rest[i+1:]) {
			continue
		}
		name := rest[:i]
		if !seen[name] && valid(name) {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out
}
