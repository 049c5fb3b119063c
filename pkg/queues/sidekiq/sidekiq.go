// Package sidekiq is chatq's Sidekiq kind: it reads and operates the
// queues that Sidekiq (Ruby, 6.x and later; writes tested with Debian's
// 6.4.1, and 7.x's layout read from its source to be the same where chatq
// writes) keeps on Redis, behind pkg/queues's Kind and Queue and its
// Retrier, Remover, Redriver and AccessLister. Sidekiq has no pause (it is
// Sidekiq Enterprise's), so the kind implements no Pauser.
//
// Addresses are "sidekiq:QUEUE", QUEUE being Sidekiq's queue name. Keys
// are Sidekiq's own with chatq's --prefix (Env.Prefix) in front; queues
// namespaced with redis-namespace are out of scope (give the namespace
// and its ':' as --prefix to read them).
//
// Keys read: queues (set of queue names), queue:<q> (list of job JSON,
// pushed at the head, taken from the tail), schedule, retry and dead
// (sorted sets of job JSON shared by every queue, scored by when a job
// runs or died, in float seconds), processes (set of process identities)
// and each process's hash <identity> (its info) and work hash
// <identity>:workers (6.x) or <identity>:work (7.x and later), whose
// values name the queue and payload a thread is working on. Keys
// written, by the actions only and as Sidekiq's own API writes them:
// queues (SADD, as Client.push), queue:<q> (LPUSH, LREM), schedule, retry
// and dead (ZREM).
//
// The shared sets are counted per queue only when they are small: Counts
// reads at most Kind.CountMax entries of each (default 1000) and reports
// the queue's count when that is the whole set, nil (unknown) when not;
// Other always has each set's size over every queue ("schedule_all",
// "retry_all", "dead_all"), which is O(1).
//
// Round trips: Discover is one SSCAN; Counts one MULTI/EXEC pipeline
// (LLEN, LINDEX, three ZCARDs, three ZRANGEs of at most CountMax
// entries) and the in-flight read: SSCANs of processes (at most 1000
// processes) and one pipeline of EXISTS, HGET info and HGETALL of the work
// hashes (each bounded by its process's concurrency). Scan is one LRANGE
// or ZRANGE of at most Page entries per page. Get searches the first
// 10,000 entries of the queue's list (LRANGE pages of 500), then walks
// the three sets with ZSCAN MATCH (COUNT 200 per call), then reads the
// work hashes. Remove does a Get's search per job, Retry the sets' part
// of it, and then one script call; Redrive one ZSCAN (COUNT
// 100) and one script per page. Each script re-checks that the exact entry
// is still where it was found (ZREM's or LREM's reply) before it writes,
// and is atomic; on a Cluster the keys must share a slot (Sidekiq's
// own keys do not: a Sidekiq on a Cluster is not one chatq can write).
//
// Job payloads are edited, for a retry, only where Sidekiq's own retry
// edits them (retry_count less one, enqueued_at now); every other byte of
// the JSON is kept. A job in Sidekiq 8's format (timestamps as integer
// milliseconds) is read but not retried or redriven: those writes are for
// the 6.x and 7.x layouts only (queues.ErrReadOnly).
package sidekiq

import (
	"context"
	"fmt"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// Tested names the Sidekiq versions chatq's writes were run against.
const Tested = "6.4.1"

// Kind is the Sidekiq kind.
type Kind struct {
	env queues.Env
	// CountMax is the most entries of each shared set (schedule, retry,
	// dead) that Counts reads to count a queue's share; past it the
	// count is unknown (nil).
	CountMax int64
}

var (
	_ queues.Kind         = (*Kind)(nil)
	_ queues.AccessLister = (*Kind)(nil)
)

// New returns the Sidekiq kind on env.
func New(env queues.Env) *Kind { return &Kind{env: env, CountMax: 1000} }

// Name is "sidekiq".
func (k *Kind) Name() string { return "sidekiq" }

// Discover is one SSCAN (COUNT count) of Sidekiq's queues set, which
// Client.push adds every queue to.
func (k *Kind) Discover(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
	names, next, err := k.env.RDB.SScan(ctx, k.env.Prefix+"queues", cursor, "", count).Result()
	if isWrongType(err) { // another library's "queues" key
		return nil, 0, nil
	}
	return names, next, err
}

func isWrongType(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE") }

// Open returns the queue named name (Sidekiq's queue name); no server
// call.
func (k *Kind) Open(name string) (queues.Queue, error) {
	if name == "" {
		return nil, fmt.Errorf("%w: sidekiq queue %q: want sidekiq:QUEUE", names.ErrInvalid, name)
	}
	p := k.env.Prefix
	return &Queue{kind: k, rdb: k.env.RDB, name: name, prefix: p,
		list: p + "queue:" + name, queuesKey: p + "queues",
		schedule: p + "schedule", retry: p + "retry", dead: p + "dead", processes: p + "processes"}, nil
}

// Queue is one Sidekiq queue.
type Queue struct {
	kind                             *Kind
	rdb                              redis.UniversalClient
	name, prefix                     string
	list, queuesKey                  string
	schedule, retry, dead, processes string
}

var (
	_ queues.Queue    = (*Queue)(nil)
	_ queues.Retrier  = (*Queue)(nil)
	_ queues.Remover  = (*Queue)(nil)
	_ queues.Redriver = (*Queue)(nil)
)

// Address is "sidekiq:QUEUE".
func (q *Queue) Address() string { return "sidekiq:" + q.name }
