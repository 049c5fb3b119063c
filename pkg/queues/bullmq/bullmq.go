// Package bullmq is chatq's BullMQ kind: it reads and operates the queues
// that BullMQ (npm, the 5.x and 6.x layouts) keeps on Redis, behind
// pkg/queues's Kind and Queue and its Retrier, Remover, Redriver, Pauser,
// Recoverer and AccessLister.
//
// Addresses are "bullmq:[PREFIX:]QUEUE": BullMQ forbids ':' in a queue's
// name, so the last ':' splits a prefix (which may hold ':') from the
// queue, and a name without one is in BullMQ's default prefix "bull".
// chatq's --prefix (Env.Prefix) goes in front of BullMQ's prefix in every
// key, so a queue's keys are <Env.Prefix><PREFIX>:<QUEUE>:<suffix>.
//
// Keys read: meta (hash: version, paused, concurrency, opts.maxLenEvents),
// wait, paused and active (lists), prioritized, delayed, failed, completed
// and waiting-children (sorted sets), each job's hash <id> and its lock
// <id>:lock, repeat (job schedulers). Keys written, by the actions only
// and as BullMQ's own scripts write them: the state lists and sets, the
// job hash's fields, meta's paused and opts.maxLenEvents, marker (which
// wakes blocked workers), pc (the priority counter), events (stream),
// stalled (set), a job's :logs, :dependencies, :processed, :failed,
// :unsuccessful and :lock, a parent's dependency keys and lists, de:<id>
// and dn:<id> (deduplication). docs/kinds/bullmq.md has the table.
//
// Round trips: Discover is one SCAN and one pipeline of HMGETs; Counts one
// pipeline (and one more of one HMGET for the oldest ready job's age);
// Scan two per page (the page of ids, then a pipeline of HMGETs); Get one
// pipeline; each action one HGET of meta's version and then one script
// call per job (Retry, Remove) or per batch of at most 100 jobs (Redrive,
// Recover, a 6.x resume). Each script re-checks the job's state and the
// layout's version before its first write and is atomic; scripts touch
// keys of one queue (and a parent's, for a job of a flow), so on a Cluster
// they need BullMQ's hash-tagged prefix as BullMQ itself does.
//
// A queue whose meta names a version other than 5.x or 6.x (or none) is
// read-only: writes return an error matching queues.ErrReadOnly.
package bullmq

import (
	"context"
	"fmt"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// DefaultPrefix is BullMQ's prefix when a queue is made without one.
const DefaultPrefix = "bull"

// Tested names the BullMQ versions chatq's writes were tested with, by
// layout (the major version in meta's "bullmq:X.Y.Z").
var Tested = map[string]string{"5": "5.81.5", "6": "6.7.0"}

// Kind is the BullMQ kind.
type Kind struct {
	env queues.Env
	// MaxStalledCount is the worker option Recover applies (BullMQ's
	// default 1): it lives in the workers, not on Redis.
	MaxStalledCount int
}

var (
	_ queues.Kind         = (*Kind)(nil)
	_ queues.AccessLister = (*Kind)(nil)
)

// New returns the BullMQ kind on env.
func New(env queues.Env) *Kind { return &Kind{env: env, MaxStalledCount: 1} }

// Name is "bullmq".
func (k *Kind) Name() string { return "bullmq" }

// Discover is one SCAN (COUNT count) for <Env.Prefix>*:meta and one
// pipeline of HMGETs that keeps the hashes BullMQ wrote.
func (k *Kind) Discover(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
	keys, next, err := keyspace.ScanPage(ctx, k.env.RDB, cursor, keyspace.Quote(k.env.Prefix)+"*:meta", count)
	if err != nil || len(keys) == 0 {
		return nil, next, err
	}
	cmds := make([]*redis.SliceCmd, len(keys))
	_, err = k.env.RDB.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, key := range keys {
			cmds[i] = p.HMGet(ctx, key, "version", "opts.maxLenEvents")
		}
		return nil
	})
	if err != nil && !isWrongType(err) {
		return nil, 0, err
	}
	var out []string
	for i, key := range keys {
		v, err := cmds[i].Result()
		if isWrongType(err) { // another library's meta, of another type
			continue
		} else if err != nil {
			return nil, 0, err
		}
		version, _ := v[0].(string)
		_, capped := v[1].(string)
		if !strings.HasPrefix(version, "bullmq:") && !capped {
			continue
		}
		full := strings.TrimSuffix(strings.TrimPrefix(key, k.env.Prefix), ":meta")
		i := strings.LastIndexByte(full, ':')
		if i <= 0 || i == len(full)-1 {
			continue
		}
		out = append(out, addressName(full[:i], full[i+1:]))
	}
	return out, next, nil
}

func isWrongType(err error) bool { return err != nil && strings.HasPrefix(err.Error(), "WRONGTYPE") }

// addressName is the NAME part of an address: the queue alone in the
// default prefix.
func addressName(prefix, queue string) string {
	if prefix == DefaultPrefix {
		return queue
	}
	return prefix + ":" + queue
}

// ParseName splits NAME ("[PREFIX:]QUEUE") into BullMQ's prefix and queue.
func ParseName(name string) (prefix, queue string, err error) {
	i := strings.LastIndexByte(name, ':')
	prefix, queue = DefaultPrefix, name
	if i >= 0 {
		prefix, queue = name[:i], name[i+1:]
	}
	if queue == "" || prefix == "" {
		return "", "", fmt.Errorf("%w: bullmq queue %q: want [PREFIX:]QUEUE", names.ErrInvalid, name)
	}
	return prefix, queue, nil
}

// Open returns the queue at name ("[PREFIX:]QUEUE"); no server call.
func (k *Kind) Open(name string) (queues.Queue, error) {
	prefix, queue, err := ParseName(name)
	if err != nil {
		return nil, err
	}
	return &Queue{kind: k, rdb: k.env.RDB, prefix: prefix, name: queue,
		base: k.env.Prefix + prefix + ":" + queue + ":"}, nil
}

// Queue is one BullMQ queue.
type Queue struct {
	kind         *Kind
	rdb          redis.UniversalClient
	prefix, name string
	base         string // <Env.Prefix><prefix>:<queue>:, BullMQ's toKey('')
}

var (
	_ queues.Queue     = (*Queue)(nil)
	_ queues.Retrier   = (*Queue)(nil)
	_ queues.Remover   = (*Queue)(nil)
	_ queues.Redriver  = (*Queue)(nil)
	_ queues.Pauser    = (*Queue)(nil)
	_ queues.Recoverer = (*Queue)(nil)
)

// Address is "bullmq:[PREFIX:]QUEUE".
func (q *Queue) Address() string { return "bullmq:" + addressName(q.prefix, q.name) }

// key is one of the queue's keys, as BullMQ's toKey.
func (q *Queue) key(suffix string) string { return q.base + suffix }
