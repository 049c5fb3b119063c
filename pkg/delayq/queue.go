package delayq

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// Config is what a queue is created with.
type Config struct {
	VT      time.Duration // visibility timeout, whole seconds (default 30s)
	Delay   time.Duration // delay of each push, whole seconds (default 0)
	MaxSize int           // largest body in UTF-16 units, or Unlimited (0 means 65536)
	// MaxReceives > 0 with DeadLetter set: a message received MaxReceives
	// times moves to queue DeadLetter instead of being received again.
	MaxReceives int
	DeadLetter  string
}

func (cfg *Config) defaults() {
	if cfg.VT == 0 {
		cfg.VT = DefaultVT
	}
	if cfg.MaxSize == 0 {
		cfg.MaxSize = DefaultMaxSize
	}
}

func (c *Client) checkPolicy(ctx context.Context, q string, maxReceives int, dead string) error {
	switch {
	case maxReceives < 0:
		return fmt.Errorf("max receives %d: must not be negative: %w", maxReceives, ErrInvalidValue)
	case maxReceives > 0 && dead == "":
		return fmt.Errorf("max receives needs a dead-letter queue: %w", ErrInvalidValue)
	case maxReceives == 0 && dead != "":
		return fmt.Errorf("a dead-letter queue needs max receives: %w", ErrInvalidValue)
	case dead == "":
		return nil
	case dead == q:
		return fmt.Errorf("queue %q cannot be its own dead-letter queue: %w", q, ErrInvalidValue)
	case c.tag:
		return fmt.Errorf("dead-letter queues are not supported with hash tags (Redis Cluster): the move would cross slots: %w", ErrInvalidValue)
	}
	if err := CheckName(dead); err != nil {
		return err
	}
	n, err := c.rdb.Exists(ctx, c.keys(dead)[1]).Result()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("dead-letter %w", notFound(dead))
	}
	return nil
}

// Create makes queue q. It fails with ErrQueueExists if q exists. The
// dead-letter queue, if any, must exist.
func (c *Client) Create(ctx context.Context, q string, cfg Config) error {
	cfg.defaults()
	if err := CheckName(q); err != nil {
		return err
	}
	if err := CheckSeconds("vt", cfg.VT); err != nil {
		return err
	}
	if err := CheckSeconds("delay", cfg.Delay); err != nil {
		return err
	}
	if err := CheckMaxSize(cfg.MaxSize); err != nil {
		return err
	}
	if err := c.checkPolicy(ctx, q, cfg.MaxReceives, cfg.DeadLetter); err != nil {
		return err
	}
	maxrc := ""
	if cfg.MaxReceives > 0 {
		maxrc = strconv.Itoa(cfg.MaxReceives)
	}
	// A registry of the wrong type would refuse the SADD after the queue's
	// hash was written: check it first (create.lua checks the permission).
	if err := c.checkRegistry(ctx); err != nil {
		return err
	}
	// Then the registry, only once the queue exists: a failed script
	// (a wrong-type hash, no permission) leaves no name behind, and the
	// script checked that this user may SADD.
	created, err := createScript.Run(ctx, c.rdb, c.keys(q)[1:], int64(cfg.VT/time.Second), int64(cfg.Delay/time.Second), cfg.MaxSize, maxrc, cfg.DeadLetter, c.queuesKey(), q).Int64()
	if err != nil {
		return err
	}
	if created == 0 {
		return fmt.Errorf("queue %q: %w", q, ErrQueueExists)
	}
	return c.rdb.SAdd(ctx, c.queuesKey(), q).Err()
}

// checkRegistry fails when <ns>:QUEUES exists and is not a set.
func (c *Client) checkRegistry(ctx context.Context) error {
	ty, err := c.rdb.Type(ctx, c.queuesKey()).Result()
	if err != nil {
		return err
	}
	if ty != "set" && ty != "none" {
		return fmt.Errorf("WRONGTYPE %s is a %s, not a set (RSMQ's registry of queue names): nothing written", c.queuesKey(), ty)
	}
	return nil
}

// List returns the names of the namespace's queues, sorted. It reads the
// registry in bounded SSCAN steps.
func (c *Client) List(ctx context.Context) ([]string, error) {
	var qs []string
	err := c.registryPages(ctx, func(page []string) error {
		qs = append(qs, page...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(qs)
	return qs, nil
}

// registryPages calls fn with each page of the registry's names, read with
// SSCAN (stepCount a call, so each call is bounded), every name once
// (SSCAN may return a member twice).
func (c *Client) registryPages(ctx context.Context, fn func(page []string) error) error {
	seen := map[string]bool{}
	var cursor uint64
	for {
		page, next, err := c.rdb.SScan(ctx, c.queuesKey(), cursor, "", stepCount).Result()
		if err != nil {
			return err
		}
		fresh := page[:0]
		for _, q := range page {
			if !seen[q] {
				seen[q] = true
				fresh = append(fresh, q)
			}
		}
		if len(fresh) > 0 {
			if err := fn(fresh); err != nil {
				return err
			}
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// Attributes are a queue's settings and counters, as RSMQ stores them.
type Attributes struct {
	Name        string
	VT          time.Duration
	Delay       time.Duration
	MaxSize     int
	MaxReceives int
	DeadLetter  string
	TotalRecv   int64
	TotalSent   int64
	Created     time.Time
	Modified    time.Time
}

var attributeFields = []string{"vt", "delay", "maxsize", "totalrecv", "totalsent", "created", "modified", "maxreceives", "deadletter"}

// attributes reads the fields of attributeFields from a reply.
func attributes(q string, a []any) Attributes {
	return Attributes{
		Name:        q,
		VT:          time.Duration(num(a[0])) * time.Second,
		Delay:       time.Duration(num(a[1])) * time.Second,
		MaxSize:     int(num(a[2])),
		TotalRecv:   num(a[3]),
		TotalSent:   num(a[4]),
		Created:     secTime(str(a[5])),
		Modified:    secTime(str(a[6])),
		MaxReceives: int(num(a[7])),
		DeadLetter:  str(a[8]),
	}
}

// Attributes returns queue q's attributes without counting its messages:
// one HMGET, O(1) whatever the queue holds.
func (c *Client) Attributes(ctx context.Context, q string) (*Attributes, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	a, err := c.rdb.HMGet(ctx, c.keys(q)[1], attributeFields...).Result()
	if err != nil {
		return nil, err
	}
	if a[0] == nil || a[1] == nil || a[2] == nil {
		return nil, notFound(q)
	}
	at := attributes(q, a)
	c.remember(q, at.DeadLetter)
	return &at, nil
}

// Stats describes a queue at one instant of server time.
type Stats struct {
	Attributes
	// Messages = Ready + Delayed + InFlight.
	Messages int64
	// Ready messages are due now.
	Ready int64
	// Delayed messages were never received and are not due yet.
	Delayed int64
	// InFlight messages were received and are invisible until their
	// visibility timeout ends (or a retry's delay).
	InFlight int64
	// SplitExact is false when the split of invisible messages into Delayed
	// and InFlight may be off: chatq's index of received messages is
	// incomplete (rsmq created the queue or received from it; Reindex
	// rebuilds it). Messages and Ready are always exact.
	SplitExact bool
	// NextVisible is when the next invisible message becomes due (zero if
	// none), and Now the server time the counts were taken at, in ms.
	NextVisible time.Time
	Now         time.Time
	// OldestReady is the ready message that has waited longest to be
	// received: the lowest visible-at in the queue when it is at or before
	// Now (zero when nothing is ready). OldestReadyAge is Now minus its
	// VisibleAt; its Sent is RSMQ's "sent", from the id.
	OldestReady    OldestReady
	OldestReadyAge time.Duration
	// DeadLetterMissing is true when DeadLetter names a queue that does not
	// exist: the policy is off (receive delivers such messages again rather
	// than lose them) until that queue is created again.
	DeadLetterMissing bool
}

// OldestReady names a ready message by id, with its times.
type OldestReady struct {
	ID        string
	VisibleAt time.Time
	Sent      time.Time
}

// Stats returns queue q's attributes and counts in one read-only script,
// O(log n) server time whatever the queue holds (and, when q has a
// dead-letter policy, one HEXISTS to see whether that queue exists), with
// the oldest ready message. Messages and Ready are
// exact; the split of the others into Delayed and InFlight comes from
// chatq's index of received messages, and SplitExact says whether that
// index is complete. It is not when the queue was created by rsmq or an
// rsmq client received from it since; Reindex rebuilds it.
func (c *Client) Stats(ctx context.Context, q string) (*Stats, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	return c.stats(ctx, q)
}

// Reindex rebuilds queue q's index of received messages in bounded steps
// (ZSCANs of 100 messages in each script call until it has spent about a
// millisecond of server time), while the queue stays in use. It
// ends complete unless another client (rsmq) received from the queue
// meanwhile; then Stats keeps reporting SplitExact false. It needs write
// permission on the queue's keys.
func (c *Client) Reindex(ctx context.Context, q string) error {
	if err := CheckName(q); err != nil {
		return err
	}
	return c.reindex(ctx, q)
}

func (c *Client) stats(ctx context.Context, q string) (*Stats, error) {
	a, err := run(ctx, c.rdb, statsScript, c.keys(q))
	if err != nil {
		return nil, err
	}
	s, err := parseStats(q, a)
	if err != nil {
		return nil, err
	}
	if s.DeadLetter != "" {
		n, err := c.rdb.HExists(ctx, c.keys(s.DeadLetter)[1], "vt").Result()
		if err != nil {
			return nil, err
		}
		s.DeadLetterMissing = !n
	}
	c.remember(q, s.DeadLetter)
	return s, nil
}

// parseStats reads stats.lua's reply for queue q.
func parseStats(q string, a []any) (*Stats, error) {
	if len(a) == 0 || str(a[0]) != "ok" || len(a) < 19 {
		return nil, notFound(q)
	}
	s := &Stats{
		Attributes: attributes(q, a[2:11]),
		Now:        msTime(str(a[1])),
		Messages:   num(a[11]),
		Ready:      num(a[12]),
	}
	hidden, inflight := num(a[13]), num(a[14])
	s.NextVisible = msTime(str(a[15]))
	s.SplitExact = num(a[16]) == 1
	// A stale index (rsmq deleted a message chatq had received) must not
	// make the counts impossible.
	s.InFlight = min(max(inflight, 0), hidden)
	s.Delayed = hidden - s.InFlight
	if id := str(a[17]); id != "" {
		s.OldestReady = OldestReady{ID: id, VisibleAt: scoreTime(str(a[18])), Sent: SentAt(id)}
		s.OldestReadyAge = max(s.Now.Sub(s.OldestReady.VisibleAt), 0)
	}
	return s, nil
}

// reindex rebuilds queue q's index of received messages in bounded steps.
func (c *Client) reindex(ctx context.Context, q string) error {
	keys := c.keys(q)
	ok, err := reindexBeginScript.Run(ctx, c.rdb, keys).Int64()
	if err != nil {
		return err
	}
	if ok == 0 {
		return notFound(q)
	}
	cursor := "0"
	for {
		a, err := run(ctx, c.rdb, reindexStepScript, keys, cursor, stepCount, reindexBudget.Microseconds())
		if err != nil {
			return err
		}
		if cursor = str(a[0]); cursor == "0" || cursor == "stop" {
			break
		}
	}
	return reindexEndScript.Run(ctx, c.rdb, keys).Err()
}

// Changes are the attributes SetAttributes changes; nil fields stay.
type Changes struct {
	VT      *time.Duration
	Delay   *time.Duration
	MaxSize *int
	// MaxReceives and DeadLetter are set together; MaxReceives 0 with
	// DeadLetter "" removes the policy.
	MaxReceives *int
	DeadLetter  *string
}

// SetAttributes changes queue q's attributes and its modified time.
func (c *Client) SetAttributes(ctx context.Context, q string, ch Changes) error {
	if err := CheckName(q); err != nil {
		return err
	}
	var args []any
	if ch.VT != nil {
		if err := CheckSeconds("vt", *ch.VT); err != nil {
			return err
		}
		args = append(args, "vt", int64(*ch.VT/time.Second))
	}
	if ch.Delay != nil {
		if err := CheckSeconds("delay", *ch.Delay); err != nil {
			return err
		}
		args = append(args, "delay", int64(*ch.Delay/time.Second))
	}
	if ch.MaxSize != nil {
		if err := CheckMaxSize(*ch.MaxSize); err != nil {
			return err
		}
		args = append(args, "maxsize", *ch.MaxSize)
	}
	if ch.MaxReceives != nil || ch.DeadLetter != nil {
		if ch.MaxReceives == nil || ch.DeadLetter == nil {
			return fmt.Errorf("max receives and dead-letter queue are set together: %w", ErrInvalidValue)
		}
		if err := c.checkPolicy(ctx, q, *ch.MaxReceives, *ch.DeadLetter); err != nil {
			return err
		}
		maxrc := ""
		if *ch.MaxReceives > 0 {
			maxrc = strconv.Itoa(*ch.MaxReceives)
		}
		args = append(args, "maxreceives", maxrc, "deadletter", *ch.DeadLetter)
	}
	if len(args) == 0 {
		return fmt.Errorf("no attribute to set: %w", ErrInvalidValue)
	}
	n, err := setScript.Run(ctx, c.rdb, c.keys(q)[1:], args...).Int64()
	if err != nil {
		return err
	}
	if n == 0 {
		return notFound(q)
	}
	if ch.DeadLetter != nil {
		c.remember(q, *ch.DeadLetter)
	}
	return nil
}

// Delete removes queue q and its messages. The script checks the keys'
// types and (Redis 7) this user's permissions before it UNLINKs anything;
// UNLINK frees a big queue in the background. Then the name leaves the
// registry (a second command: on Redis Cluster it lives in another slot).
// DeleteAtMost deletes only a queue holding at most a given number.
func (c *Client) Delete(ctx context.Context, q string) error {
	_, err := c.DeleteAtMost(ctx, q, AnySize)
	return err
}

// Purge deletes every message of queue q and returns how many; the
// queue's attributes and counters stay. One atomic script that UNLINKs the
// queue's keys (big values are freed in a background thread) and writes
// the attributes back: O(1) server time whatever the queue holds. A push
// right after it is kept. PurgeAtMost purges only a queue holding at most
// a given number.
func (c *Client) Purge(ctx context.Context, q string) (int64, error) {
	return c.PurgeAtMost(ctx, q, AnySize)
}

// remember records q's dead-letter queue for Receive.
func (c *Client) remember(q, dead string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dead[q] = dead
}

func (c *Client) deadLetter(q string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.dead[q]
}
