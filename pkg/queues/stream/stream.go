package stream

import (
	"context"
	"fmt"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
)

// Kind is Redis Streams consumer groups: each (stream, group) pair is a
// queue.
type Kind struct {
	env queues.Env
}

var (
	_ queues.Kind         = (*Kind)(nil)
	_ queues.AccessLister = (*Kind)(nil)
	_ queues.Queue        = (*Queue)(nil)
	_ queues.Recoverer    = (*Queue)(nil)
	_ queues.Remover      = (*Queue)(nil)
	_ queues.DeadLetterer = (*Queue)(nil)
	_ queues.Redriver     = (*Queue)(nil)
)

// New returns the stream kind on env's server, under env.Prefix.
func New(env queues.Env) *Kind { return &Kind{env: env} }

// Name is "stream".
func (k *Kind) Name() string { return "stream" }

// Discover does one SCAN (TYPE stream, COUNT count) under the prefix, on
// one master of a Cluster at a time, then XINFO GROUPS of each stream it
// found in one pipeline: every group is a name. A stream without groups
// is no queue.
func (k *Kind) Discover(ctx context.Context, cursor uint64, count int64) ([]string, uint64, error) {
	keys, next, err := keyspace.ScanTypePage(ctx, k.env.RDB, cursor, keyspace.Pattern(k.env.Prefix), count, "stream")
	if err != nil || len(keys) == 0 {
		return nil, next, err
	}
	cmds := make([]*redis.XInfoGroupsCmd, len(keys))
	// Each reply is read on its own: a stream deleted or retyped since
	// the SCAN fails its command, not the step.
	_, _ = k.env.RDB.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, key := range keys {
			cmds[i] = p.XInfoGroups(ctx, key)
		}
		return nil
	})
	var out []string
	for i, key := range keys {
		groups, err := cmds[i].Result()
		if err != nil {
			if isGone(err) {
				continue
			}
			return nil, 0, err
		}
		rel, ok := strings.CutPrefix(key, k.env.Prefix)
		if !ok {
			continue
		}
		for _, g := range groups {
			out = append(out, Name(rel, g.Name))
		}
	}
	return out, next, nil
}

// isGone reports whether err says the key is no longer a stream: deleted
// ("no such key") or of another type since it was found.
func isGone(err error) bool {
	s := err.Error()
	return strings.Contains(s, "no such key") || strings.HasPrefix(s, "WRONGTYPE")
}

// Name is the queue name of group on the stream at key (without the
// prefix): KEY/GROUP, with '%' and '/' in GROUP percent-encoded, so that
// the group is what follows the last '/'.
func Name(key, group string) string {
	return key + "/" + strings.NewReplacer("%", "%25", "/", "%2F").Replace(group)
}

// ParseName splits a queue name into the stream's key (without the
// prefix) and the group; a name without '/' or with a '%' in the group
// that is not %25 or %2F matches ErrInvalid.
func ParseName(name string) (key, group string, err error) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return "", "", &names.Error{Kind: "stream queue", Name: name, Reason: "want KEY/GROUP (a '/' in GROUP written %2F, a '%' %25)"}
	}
	key, enc := name[:i], name[i+1:]
	var b strings.Builder
	for j := 0; j < len(enc); j++ {
		if enc[j] != '%' {
			b.WriteByte(enc[j])
			continue
		}
		switch code := strings.ToUpper(enc[j+1 : min(j+3, len(enc))]); code {
		case "25":
			b.WriteByte('%')
		case "2F":
			b.WriteByte('/')
		default:
			return "", "", &names.Error{Kind: "stream queue", Name: name, Reason: "a '%' in the group must be %25 ('%') or %2F ('/')"}
		}
		j += 2
	}
	return key, b.String(), nil
}

// Open returns the queue of a KEY/GROUP name; it makes no server call.
func (k *Kind) Open(name string) (queues.Queue, error) {
	q, err := k.OpenQueue(name)
	if err != nil {
		return nil, err
	}
	return q, nil
}

// OpenQueue is Open returning the concrete *Queue.
func (k *Kind) OpenQueue(name string) (*Queue, error) {
	key, group, err := ParseName(name)
	if err != nil {
		return nil, err
	}
	return &Queue{
		rdb:   k.env.RDB,
		key:   k.env.Prefix + key,
		group: group,
		dead:  k.env.Prefix + key + ":dead:" + group,
		rel:   key,
		pre:   k.env.Prefix,
	}, nil
}

// Queue is one consumer group of one stream.
type Queue struct {
	rdb   redis.UniversalClient
	key   string // the stream's key, prefix applied
	group string
	dead  string // the default dead-letter stream's key, prefix applied
	rel   string // the stream's key without the prefix
	pre   string
}

// Address is "stream:KEY/GROUP".
func (q *Queue) Address() string { return "stream:" + Name(q.rel, q.group) }

// Key is the stream's key, and DeadKey the default dead-letter stream's
// (KEY:dead:GROUP), both with the prefix applied.
func (q *Queue) Key() string     { return q.key }
func (q *Queue) DeadKey() string { return q.dead }

// Group is the consumer group's name.
func (q *Queue) Group() string { return q.group }

// isEntryID reports whether id is a complete stream entry id, MS-SEQ, each
// part 1 to 20 digits (`^[0-9]{1,20}-[0-9]{1,20}$`). A loop, not that
// regexp: compiled in a package-level var it cost every run of the binary
// some 370 allocations at start-up.
func isEntryID(id string) bool {
	ms, seq, ok := strings.Cut(id, "-")
	return ok && isDigits(ms) && isDigits(seq)
}

// isDigits reports whether s is 1 to 20 ASCII digits.
func isDigits(s string) bool {
	if len(s) < 1 || len(s) > 20 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// checkIDs refuses, before any call, an id that is not a complete entry
// id: XRANGE and XCLAIM would read "5" as a range or refuse it.
func checkIDs(ids []string) error {
	for _, id := range ids {
		if !isEntryID(id) {
			return fmt.Errorf("%w: stream entry id %q: want MS-SEQ, as 1700000000000-0", names.ErrInvalid, id)
		}
	}
	return nil
}

// unique returns ids without repeats, in their order: an id given twice
// is acted on once.
func unique(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// notFound maps the server's replies for a missing stream or group to
// ErrQueueNotFound.
func (q *Queue) notFound(err error) error {
	if err == nil {
		return nil
	}
	if s := err.Error(); strings.HasPrefix(s, "NOGROUP") || strings.Contains(s, "no such key") {
		return q.errNoQueue()
	}
	return err
}

// errNoQueue is the error of a queue whose stream or group is missing.
func (q *Queue) errNoQueue() error {
	return fmt.Errorf("%w: %s (stream %q, group %q)", queues.ErrQueueNotFound, q.Address(), q.key, q.group)
}

// errReadOnly is the refusal of a write on a server before Redis 7.0.
func errReadOnly(version string) error {
	return fmt.Errorf("%w: Redis %s; chatq writes stream groups on Redis 7.0 and later (tested: 7.0.15)", queues.ErrReadOnly, version)
}
