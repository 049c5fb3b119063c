// Package shardlist is the sharded LIST of "Redis in Action" §11.4: one
// logical list stored as a run of bounded Redis LISTs (shards), with pushes,
// pops, blocking pops, length and range done by Lua scripts.
//
// # Keys
//
// A list KEY (validated with names.ListKey) owns, behind Options.Prefix:
//
//	<prefix>{KEY}:first  STRING  number of the left end shard (absent = 0)
//	<prefix>{KEY}:last   STRING  number of the right end shard (absent = 0)
//	<prefix>{KEY}:mid    STRING  items in the shards strictly between first
//	                             and last (absent = 0)
//	<prefix>{KEY}:<n>    LIST    shard n, for first <= n <= last
//
// All of them share the hash tag {KEY}, so every script touches one Redis
// Cluster slot; scripts declare the keys they read or write and build shard
// names from KEYS[1]. A shard holds at most ShardSize-1 items (the book's
// LIST_CHUNK_SIZE rule). LPUSH opens shards toward negative numbers, RPUSH
// toward positive ones. Emptied lists keep their two endpoint keys (as in
// the book); the mid key is deleted whenever its count drops to 0.
//
// # The mid count
//
// Invariant, after every script: mid = the sum of LLEN over the shards n
// with first < n < last. Only the push and pop scripts change a shard that
// is (or becomes) part of the list, and only at an end:
//
//   - push fills the end shard, then moves the endpoint outward; each shard
//     it leaves is now strictly inside (unless it is the other end) and its
//     length, known to the script, is added;
//   - pop takes from the end shard; when the endpoint steps inward onto a
//     shard strictly before the other end, that shard's LLEN is subtracted
//     (it is an end shard now, read live);
//   - the wake script only writes shards outside first..last, and the wait
//     of a blocking pop changes nothing (see below).
//
// So the length is LLEN(first) + LLEN(last) (when they differ) + mid: push
// (which returns the new length) and Len cost O(1) in the number of items.
// Middle shards are never empty (a shard is left behind with at least one
// item), so the mid key is absent only when no shard lies between the
// endpoints; a list written before the mid count existed has middle shards
// and no key, and the scripts then count them (push and pop store the
// count). Layout and Range still read every shard's LLEN.
//
// # Round trips and atomicity
//
//   - Push: one script call (EVALSHA) per batch of Options.BatchSize items;
//     each batch is atomic, a push of several batches is not.
//   - Pop (with a count), Len, Range, Layout: one atomic script call.
//   - BLPop/BRPop: one pop script call; when the list is empty, one pipeline
//     of [wake script, wait on the end shard] per wait slice of at most one
//     second, then one pop script call again.
//
// # Blocking pops
//
// As in the book, a blocking pop waits on the end shard. Just before it, a
// script checks whether the endpoint has moved so that the shard is no
// longer part of the list; if so it pushes WakeMarker into that shard, the
// wait returns at once and the caller looks again (its next pop removes the
// marker). WakeMarker is one fixed value: every pop filters it and no push
// accepts it. Unlike the book's BLPOP, the wait is BLMOVE of the shard onto
// itself (LEFT LEFT or RIGHT RIGHT): it blocks the same way but puts the
// element back in the same atomic step, so it takes nothing. The item is
// then popped by the pop script, which returns what a plain list's
// BLPOP/BRPOP would. BLMOVE needs Redis >= 6.2.
//
// The book reads shard sizes with CONFIG from Lua; Redis >= 5 forbids that,
// so the size is an argument here.
package shardlist

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/chatq-dev/chatq/internal/names"
	"github.com/redis/go-redis/v9"
)

// Defaults for Options.
const (
	DefaultShardSize = 512
	DefaultBatchSize = 500
	DefaultWaitSlice = time.Second
	maxBatchSize     = 1000 // stays well inside Lua's unpack limits (Redis and the embedded server)
)

// WakeMarker is the value a blocking pop pushes into a stale shard to wake
// itself ("Redis in Action" calls it the dummy). It is the same for every
// process, never returned by a pop, and refused by pushes.
const WakeMarker = "\x00chatq:shardlist:wake\x00"

var (
	// ErrEmpty is returned by pops when there is nothing to pop, and by
	// blocking pops when the wait ends with nothing.
	ErrEmpty = errors.New("list is empty")
	// ErrShardSize is returned for a shard size below 2 (the book's push
	// would loop forever).
	ErrShardSize = errors.New("shard size must be at least 2")
	// ErrReserved is returned when an item to push equals WakeMarker.
	ErrReserved = errors.New("item equals the reserved wake-up marker")
	// ErrCount is returned for a pop count below 1.
	ErrCount = errors.New("count must be at least 1")
)

var (
	// stateSrc is the prelude of the scripts that read the list's length.
	//go:embed state.lua
	stateSrc string
	//go:embed push.lua
	pushSrc string
	//go:embed pop.lua
	popSrc string
	//go:embed wake.lua
	wakeSrc string
	//go:embed layout.lua
	layoutSrc string
	//go:embed range.lua
	rangeSrc string
	//go:embed len.lua
	lenSrc string

	pushScript   = redis.NewScript(stateSrc + pushSrc)
	popScript    = redis.NewScript(stateSrc + popSrc)
	wakeScript   = redis.NewScript(wakeSrc)
	layoutScript = redis.NewScript(stateSrc + layoutSrc)
	rangeScript  = redis.NewScript(rangeSrc)
	lenScript    = redis.NewScript(stateSrc + lenSrc)
)

// Side is the end of the list an operation works on.
type Side int

const (
	Left  Side = iota // the head: LPUSH, LPOP
	Right             // the tail: RPUSH, RPOP
)

func (s Side) String() string {
	if s == Left {
		return "left"
	}
	return "right"
}

// Options tune a List; the zero value takes the defaults.
type Options struct {
	// Prefix is put in front of every key (before the '{').
	Prefix string
	// ShardSize bounds a shard to ShardSize-1 items; 0 means 512.
	ShardSize int
	// BatchSize is the number of items pushed per script call; 0 means 500.
	BatchSize int
	// WaitSlice is the longest single wait (BLMOVE) of a blocking pop; 0 means
	// one second. It is also kept 150 ms under the client's read timeout
	// (or at a quarter of it), since the wait is pipelined with the wake
	// script and read with the client's read timeout.
	WaitSlice time.Duration
}

// List is one sharded list. It is safe for concurrent use.
type List struct {
	c     redis.UniversalClient
	key   string
	keys  []string // first, last, mid
	base  string   // shard keys are base + number
	size  int
	batch int
	slice time.Duration
}

// New returns the sharded list KEY on c. It checks KEY and the options and
// makes no Redis call.
func New(c redis.UniversalClient, key string, opt Options) (*List, error) {
	if err := names.ListKey(key); err != nil {
		return nil, err
	}
	if opt.ShardSize == 0 {
		opt.ShardSize = DefaultShardSize
	}
	if opt.ShardSize < 2 {
		return nil, ErrShardSize
	}
	if opt.BatchSize <= 0 {
		opt.BatchSize = DefaultBatchSize
	}
	opt.BatchSize = min(opt.BatchSize, maxBatchSize)
	if opt.WaitSlice <= 0 {
		opt.WaitSlice = DefaultWaitSlice
	}
	if rt := readTimeout(c); rt > 0 {
		// The pipelined wait must be answered within the read timeout,
		// and Redis ends a blocking wait up to 1000/hz ms (100 ms) late.
		opt.WaitSlice = max(min(opt.WaitSlice, max(rt-150*time.Millisecond, rt/4)), time.Millisecond)
	}
	base := opt.Prefix + "{" + key + "}:"
	return &List{
		c: c, key: key, keys: []string{base + "first", base + "last", base + "mid"}, base: base,
		size: opt.ShardSize, batch: opt.BatchSize, slice: opt.WaitSlice,
	}, nil
}

// readTimeout is the client's read timeout (a pipeline waits at most that
// long for its replies), or 0 when there is none.
func readTimeout(c redis.UniversalClient) time.Duration {
	var rt time.Duration
	switch c := c.(type) {
	case *redis.Client:
		rt = c.Options().ReadTimeout
	case *redis.ClusterClient:
		rt = c.Options().ReadTimeout
	default:
		return 0
	}
	switch {
	case rt == 0:
		return 3 * time.Second // go-redis's default
	case rt < 0:
		return 0
	}
	return rt
}

// Key is the list's key as given to New.
func (l *List) Key() string { return l.key }

// ShardKey is the Redis key of shard n.
func (l *List) ShardKey(n int64) string { return l.base + strconv.FormatInt(n, 10) }

// EndpointKeys are the Redis keys of the first and last shard numbers.
func (l *List) EndpointKeys() (first, last string) { return l.keys[0], l.keys[1] }

// MidKey is the Redis key of the count of items in the shards strictly
// between the endpoints.
func (l *List) MidKey() string { return l.keys[2] }

// endpoints are the keys of the scripts that read only the endpoints.
func (l *List) endpoints() []string { return l.keys[:2] }

// LPush pushes items onto the head, as LPUSH: the last item ends up first.
// It returns the list's length after the push.
func (l *List) LPush(ctx context.Context, items ...string) (int64, error) {
	return l.Push(ctx, Left, items)
}

// RPush pushes items onto the tail, as RPUSH. It returns the new length.
func (l *List) RPush(ctx context.Context, items ...string) (int64, error) {
	return l.Push(ctx, Right, items)
}

// Push pushes items onto one end in batches of Options.BatchSize, one script
// call per batch. Items are checked before the first write. It returns the
// length after the last batch.
func (l *List) Push(ctx context.Context, side Side, items []string) (int64, error) {
	for _, it := range items {
		if it == WakeMarker {
			return 0, ErrReserved
		}
	}
	var n int64
	if len(items) == 0 {
		return l.Len(ctx)
	}
	for i := 0; i < len(items); i += l.batch {
		chunk := items[i:min(i+l.batch, len(items))]
		args := make([]any, 0, 3+len(chunk))
		args = append(args, side.String(), l.size, WakeMarker)
		for _, it := range chunk {
			args = append(args, it)
		}
		var err error
		n, err = pushScript.Run(ctx, l.c, l.keys, args...).Int64()
		if err != nil {
			return 0, fmt.Errorf("push to list %s: %w", l.key, err)
		}
	}
	return n, nil
}

// LPop pops up to count items from the head, as LPOP KEY COUNT. It returns
// ErrEmpty when the list is empty.
func (l *List) LPop(ctx context.Context, count int) ([]string, error) {
	return l.Pop(ctx, Left, count)
}

// RPop pops up to count items from the tail, as RPOP KEY COUNT (the last
// item first). It returns ErrEmpty when the list is empty.
func (l *List) RPop(ctx context.Context, count int) ([]string, error) {
	return l.Pop(ctx, Right, count)
}

// Pop pops up to count items from one end in one atomic script call.
func (l *List) Pop(ctx context.Context, side Side, count int) ([]string, error) {
	if count < 1 {
		return nil, ErrCount
	}
	items, _, err := l.pop(ctx, side, count)
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, ErrEmpty
	}
	return items, nil
}

// pop runs the pop script; extra is a shard into which this caller's wake
// script pushed the marker, to remove it from. It returns the items and the
// end shard.
func (l *List) pop(ctx context.Context, side Side, count int, extra ...any) ([]string, int64, error) {
	args := append([]any{side.String(), count, WakeMarker}, extra...)
	res, err := popScript.Run(ctx, l.c, l.keys, args...).Slice()
	if err != nil {
		return nil, 0, fmt.Errorf("pop from list %s: %w", l.key, err)
	}
	if len(res) == 0 {
		return nil, 0, fmt.Errorf("pop from list %s: empty script reply", l.key)
	}
	shard, _ := res[0].(int64)
	items := make([]string, 0, len(res)-1)
	for _, v := range res[1:] {
		s, _ := v.(string)
		items = append(items, s)
	}
	return items, shard, nil
}

// BLPop pops the head item, waiting up to timeout for one (0 waits until
// ctx ends). It returns ErrEmpty when the wait ends with nothing.
func (l *List) BLPop(ctx context.Context, timeout time.Duration) (string, error) {
	return l.BPop(ctx, Left, timeout)
}

// BRPop pops the tail item, waiting up to timeout (0: until ctx ends).
func (l *List) BRPop(ctx context.Context, timeout time.Duration) (string, error) {
	return l.BPop(ctx, Right, timeout)
}

// BPop is the blocking pop of "Redis in Action" §11.4.4, with sub-second
// timeouts and a wait that takes nothing: see the package documentation.
func (l *List) BPop(ctx context.Context, side Side, timeout time.Duration) (string, error) {
	if timeout < 0 {
		return "", fmt.Errorf("negative timeout %s", timeout)
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	var marked []any // the shard a wake marker went into, to clean
	for {
		items, shard, err := l.pop(ctx, side, 1, marked...)
		if err != nil {
			return "", err
		}
		marked = nil
		if len(items) > 0 {
			return items[0], nil
		}
		wait := l.slice
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return "", ErrEmpty
			}
			wait = min(wait, left)
		}
		item, ok, err := l.wait(ctx, side, shard, wait)
		if err != nil {
			return "", err
		}
		if ok && item == WakeMarker {
			marked = []any{shard}
		}
		// Woken (or timed out): the wait took nothing, so look again.
	}
}

// wait pipelines the wake script with one wait of at most wait on shard:
// BLMOVE of the shard onto itself, from and to this end, which blocks like
// BLPOP/BRPOP but puts the element straight back where it was, in the same
// atomic step, so the shard is unchanged. It returns that element (an item,
// or WakeMarker); ok is false when the wait timed out.
func (l *List) wait(ctx context.Context, side Side, shard int64, wait time.Duration) (item string, ok bool, err error) {
	// go-redis rounds blocking timeouts to whole seconds; Redis takes
	// fractions, so the command is sent as is. 0 would mean forever.
	secs := strconv.FormatFloat(max(wait, time.Millisecond).Seconds(), 'f', 3, 64)
	key := l.ShardKey(shard)
	pipe := l.c.Pipeline()
	wake := wakeScript.Eval(ctx, pipe, l.endpoints(), side.String(), shard, WakeMarker)
	move := pipe.Do(ctx, "blmove", key, key, side.String(), side.String(), secs)
	_, _ = pipe.Exec(ctx)
	if err := wake.Err(); err != nil {
		return "", false, fmt.Errorf("wait on list %s: %w", l.key, err)
	}
	item, err = move.Text()
	if errors.Is(err, redis.Nil) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("wait on list %s: %w", l.key, err)
	}
	return item, true, nil
}

// Len is the number of items, as LLEN, in one script call whose cost does
// not depend on the length: LLEN of the two end shards plus the count kept
// in MidKey for the shards between them.
func (l *List) Len(ctx context.Context) (int64, error) {
	n, err := lenScript.Run(ctx, l.c, l.keys).Int64()
	if err != nil {
		return 0, fmt.Errorf("length of list %s: %w", l.key, err)
	}
	return n, nil
}

// Range returns the items from index start to stop inclusive, negative
// indexes counting from the tail, as LRANGE.
func (l *List) Range(ctx context.Context, start, stop int64) ([]string, error) {
	items, err := rangeScript.Run(ctx, l.c, l.endpoints(), start, stop, WakeMarker).StringSlice()
	if err != nil {
		return nil, fmt.Errorf("range of list %s: %w", l.key, err)
	}
	return items, nil
}

// Layout describes how a list is stored.
type Layout struct {
	Key    string  `json:"key"`
	First  int64   `json:"first"`  // number of the left end shard
	Last   int64   `json:"last"`   // number of the right end shard
	Length int64   `json:"length"` // items in all shards
	Shards []Shard `json:"shards"` // first to last
	// Mid is the count kept in MidKey: the items in the shards strictly
	// between First and Last. It equals the sum of those shards' lengths.
	Mid int64 `json:"mid"`
}

// Shard is one shard of a Layout.
type Shard struct {
	Index  int64  `json:"index"`
	Key    string `json:"key"` // the Redis key, prefix included
	Length int64  `json:"length"`
}

// Layout returns the endpoints, the mid count and every shard's length, in
// one script call (its cost grows with the number of shards).
func (l *List) Layout(ctx context.Context) (Layout, error) {
	res, err := layoutScript.Run(ctx, l.c, l.keys).Int64Slice()
	if err != nil {
		return Layout{}, fmt.Errorf("layout of list %s: %w", l.key, err)
	}
	if len(res) < 3 {
		return Layout{}, fmt.Errorf("layout of list %s: short script reply", l.key)
	}
	lay := Layout{Key: l.key, First: res[0], Last: res[1], Mid: res[2], Shards: []Shard{}}
	for i, n := range res[3:] {
		idx := lay.First + int64(i)
		lay.Shards = append(lay.Shards, Shard{Index: idx, Key: l.ShardKey(idx), Length: n})
		lay.Length += n
	}
	return lay, nil
}
