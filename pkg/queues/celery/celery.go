// Package celery is chatq's Celery kind: it reads and operates the queues
// that Celery 5.x keeps on Redis through kombu's Redis transport (tested
// with Celery 5.2.6 and kombu 5.2.4), behind pkg/queues's Kind and Queue
// and its Remover, Recoverer and AccessLister.
//
// Addresses are "celery:QUEUE", or "celery:PREFIX|QUEUE" for a queue under
// kombu's global_keyprefix transport option PREFIX: the first '|' splits
// the prefix from the queue, so a prefix cannot hold '|', and a queue
// whose name holds '|' without a prefix is written "celery:|QUEUE".
// chatq's --prefix (Env.Prefix) goes in front of kombu's prefix in every
// key, so a queue's keys are <Env.Prefix><PREFIX><key>.
//
// Keys read: the queue's lists QUEUE and QUEUE\x06\x163, \x06\x166 and
// \x06\x169 (kombu's priority steps; ready), the unacked hash (delivery
// tag -> [message, exchange, routing key]) and the unacked_index sorted set
// (delivery tag -> time delivered), which every queue of one prefix
// shares, the bindings _kombu.binding.<exchange> (sets of
// "routing_key\x06\x16pattern\x06\x16queue"), and celery-task-meta-<id>
// (a Redis result backend's record, shown in Get's Extra). Keys written,
// by the actions only and as kombu writes them: a queue's lists, unacked
// and unacked_index.
//
// Round trips: Discover is one SCAN and a few SSCANs of the bindings it
// found; Counts one pipeline of LLENs and then one HSCAN per 100 unacked
// messages of the prefix (up to MaxUnacked); Scan one LRANGE, or one
// ZRANGE and one HMGET, per page; Get one HGET and then pages of the lists
// and of unacked until it finds the task (each list up to SearchMax from
// its tail); Remove a Get and one script per task; Recover one
// ZREVRANGEBYSCORE and one HMGET per page of 100 and one script per message.
// Each script re-checks the message (byte for byte) before its first
// write and is atomic. kombu's transport does not run on a Cluster, and
// neither do these scripts (they touch a queue's list and the prefix's
// unacked keys together).
//
// kombu records no layout version; chatq writes the layout it was tested
// with (Tested) and reads any message it can decode.
package celery

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// Tested names the versions chatq's reads and writes were tested with.
const Tested = "Celery 5.2.6, kombu 5.2.4"

// sep is kombu's separator within a binding's member and between a queue
// and its priority step.
const sep = "\x06\x16"

// steps are kombu's default priority_steps: a message of priority p goes
// to the list of the highest step <= p (step 0 is the queue's own list),
// and workers take the lists in this order.
var steps = []int{0, 3, 6, 9}

// bindingPrefix starts every binding key (after the global_keyprefix).
const bindingPrefix = "_kombu.binding."

// Defaults of the bounds; the Kind's fields may change them.
const (
	// DefaultVisibilityTimeout is kombu's visibility_timeout: a message
	// unacked longer is restored to its queue.
	DefaultVisibilityTimeout = time.Hour
	// DefaultMaxUnacked is how many unacked messages Counts reads to tell
	// a queue's own from the other queues'.
	DefaultMaxUnacked = 10000
	// DefaultSearchMax is how far Get and Remove search a list for a task
	// id, from its tail (where workers take from).
	DefaultSearchMax = 10000
)

// Kind is the Celery kind.
type Kind struct {
	env queues.Env
	// VisibilityTimeout is the workers' broker_transport_options
	// visibility_timeout, which lives in their configuration, not on
	// Redis: Recover restores messages unacked for longer.
	VisibilityTimeout time.Duration
	// MaxUnacked bounds Counts' read of the shared unacked hash: past it
	// delayed and inflight are not counted (nil) and Other says why.
	MaxUnacked int
	// SearchMax bounds Get's and Remove's search of one list.
	SearchMax int
}

var (
	_ queues.Kind         = (*Kind)(nil)
	_ queues.AccessLister = (*Kind)(nil)
)

// New returns the Celery kind on env.
func New(env queues.Env) *Kind {
	return &Kind{env: env, VisibilityTimeout: DefaultVisibilityTimeout,
		MaxUnacked: DefaultMaxUnacked, SearchMax: DefaultSearchMax}
}

// Name is "celery".
func (k *Kind) Name() string { return "celery" }

// internalExchange says whether an exchange is Celery's own plumbing
// (remote control and events go over PUBLISH, their "queues" are no lists
// of tasks).
func internalExchange(ex string) bool {
	return ex == "celeryev" || strings.HasSuffix(ex, ".pidbox")
}

// Discover is one SCAN (COUNT count) for <Env.Prefix>*_kombu.binding.*
// and, for each binding found, SSCANs of at most 10 pages of 100 members:
// the queues bound to an exchange. A queue's list without a binding is
// not found (Celery binds every queue it declares), but opens by name.
func (k *Kind) Discover(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
	keys, next, err := keyspace.ScanPage(ctx, k.env.RDB, cursor, keyspace.Quote(k.env.Prefix)+"*"+bindingPrefix+"*", count)
	if err != nil {
		return nil, 0, err
	}
	seen := map[string]bool{}
	var out []string
	for _, key := range keys {
		rest := strings.TrimPrefix(key, k.env.Prefix)
		i := strings.Index(rest, bindingPrefix)
		if i < 0 {
			continue
		}
		prefix, ex := rest[:i], rest[i+len(bindingPrefix):]
		if internalExchange(ex) || strings.Contains(prefix, "|") {
			continue
		}
		members, err := sscanAll(ctx, k.env.RDB, key)
		if isWrongType(err) {
			continue
		} else if err != nil {
			return nil, 0, err
		}
		for _, m := range members {
			b, ok := parseBinding(m)
			if !ok || b.queue == "" {
				continue
			}
			name := addressName(prefix, b.queue)
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out, next, nil
}

// bindingPages bounds the read of one binding set: one member per queue
// bound to the exchange, a handful in practice.
const bindingPages = 10

// sscanAll reads a binding set in at most bindingPages SSCANs (about
// 1,000 members).
func sscanAll(ctx context.Context, rdb redis.UniversalClient, key string) ([]string, error) {
	var out []string
	var cursor uint64
	for i := 0; i < bindingPages; i++ {
		page, next, err := rdb.SScan(ctx, key, cursor, "", 100).Result()
		if err != nil {
			return nil, err
		}
		out = append(out, page...)
		if cursor = next; cursor == 0 {
			return out, nil
		}
	}
	// More queues bound to one exchange than that: the rest are not seen
	// (not discovered, and their unacked messages not routed to them).
	return out, nil
}

type binding struct{ routingKey, pattern, queue string }

func parseBinding(m string) (binding, bool) {
	f := strings.Split(m, sep)
	if len(f) != 3 {
		return binding{}, false
	}
	return binding{f[0], f[1], f[2]}, true
}

func isWrongType(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE") }

// addressName is the NAME part of an address.
func addressName(prefix, queue string) string {
	if prefix == "" && !strings.Contains(queue, "|") {
		return queue
	}
	return prefix + "|" + queue
}

// ParseName splits NAME ("[PREFIX|]QUEUE") into kombu's global_keyprefix
// and the queue.
func ParseName(name string) (prefix, queue string, err error) {
	prefix, queue, ok := strings.Cut(name, "|")
	if !ok {
		prefix, queue = "", name
	}
	if queue == "" {
		return "", "", fmt.Errorf("%w: celery queue %q: want QUEUE or PREFIX|QUEUE", names.ErrInvalid, name)
	}
	return prefix, queue, nil
}

// Open returns the queue at name ("[PREFIX|]QUEUE"); no server call.
func (k *Kind) Open(name string) (queues.Queue, error) {
	prefix, queue, err := ParseName(name)
	if err != nil {
		return nil, err
	}
	return &Queue{kind: k, rdb: k.env.RDB, prefix: prefix, name: queue, base: k.env.Prefix + prefix}, nil
}

// Access says what each operation asks of the server.
func (k *Kind) Access() []queues.Access {
	p := k.env.Prefix + "*"
	scripts := []string{"evalsha", "eval", "script"}
	with := func(cmds ...string) []string { return append(append([]string{}, scripts...), cmds...) }
	all := []string{p}
	return []queues.Access{
		{Op: "discover", Commands: []string{"scan", "sscan"}, Keys: []string{p + bindingPrefix + "*"}},
		{Op: "counts", Commands: []string{"llen", "hlen", "hscan", "exists", "sscan"}, Keys: all},
		{Op: "scan", Commands: []string{"lrange", "zrange", "hmget", "sscan"}, Keys: all},
		{Op: "get", Commands: []string{"hget", "zscore", "lrange", "hscan", "get", "sscan"}, Keys: all},
		{Op: "remove", Write: true, Commands: with("hget", "zscore", "lrange", "hscan", "get", "sscan",
			"lpos", "lrem", "zrem", "hdel"), Keys: all},
		{Op: "recover", Write: true, Commands: with("zrevrangebyscore", "hmget", "sscan", "hget", "zscore",
			"zrem", "hdel", "rpush"), Keys: all},
		{Op: "purge", Write: true, Commands: with("llen", "exists", "unlink"), Keys: all},
	}
}
