package delayq

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
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
	var created *redis.Cmd
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		created = createScript.Run(ctx, p, c.keys(q)[1:], int64(cfg.VT/time.Second), int64(cfg.Delay/time.Second), cfg.MaxSize, maxrc, cfg.DeadLetter)
		p.SAdd(ctx, c.queuesKey(), q)
		return nil
	})
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		// A pipeline cannot fall back from EVALSHA to EVAL: load it and retry.
		if err = createScript.Load(ctx, c.rdb).Err(); err == nil {
			return c.Create(ctx, q, cfg)
		}
	}
	if err != nil {
		return err
	}
	if n, _ := created.Int64(); n == 0 {
		return fmt.Errorf("queue %q: %w", q, ErrQueueExists)
	}
	return nil
}

// List returns the names of the namespace's queues, sorted.
func (c *Client) List(ctx context.Context) ([]string, error) {
	qs, err := c.rdb.SMembers(ctx, c.queuesKey()).Result()
	if err != nil {
		return nil, err
	}
	slices.Sort(qs)
	return qs, nil
}

// Stats describes a queue at one instant of server time.
type Stats struct {
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
	// Messages = Ready + Delayed + InFlight.
	Messages int64
	// Ready messages are due now.
	Ready int64
	// Delayed messages were never received and are not due yet.
	Delayed int64
	// InFlight messages were received and are invisible until their
	// visibility timeout ends (or a retry's delay).
	InFlight int64
	// NextVisible is when the next invisible message becomes due (zero if
	// none), and Now the server time the counts were taken at, in ms.
	NextVisible time.Time
	Now         time.Time
}

// Stats returns queue q's attributes and counts.
func (c *Client) Stats(ctx context.Context, q string) (*Stats, error) {
	if err := CheckName(q); err != nil {
		return nil, err
	}
	a, err := run(ctx, c.rdb, statsScript, c.keys(q))
	if err != nil {
		return nil, err
	}
	if str(a[0]) != "ok" {
		return nil, notFound(q)
	}
	s := &Stats{
		Name:        q,
		Now:         msTime(str(a[1])),
		VT:          time.Duration(num(a[2])) * time.Second,
		Delay:       time.Duration(num(a[3])) * time.Second,
		MaxSize:     int(num(a[4])),
		TotalRecv:   num(a[5]),
		TotalSent:   num(a[6]),
		Created:     secTime(str(a[7])),
		Modified:    secTime(str(a[8])),
		MaxReceives: int(num(a[9])),
		DeadLetter:  str(a[10]),
		Messages:    num(a[11]),
		Ready:       num(a[12]),
		Delayed:     num(a[13]),
		InFlight:    num(a[14]),
		NextVisible: msTime(str(a[15])),
	}
	c.remember(q, s.DeadLetter)
	return s, nil
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

// Delete removes queue q and its messages.
func (c *Client) Delete(ctx context.Context, q string) error {
	if err := CheckName(q); err != nil {
		return err
	}
	var del *redis.IntCmd
	_, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		del = p.Del(ctx, c.keys(q)[1])
		p.Del(ctx, c.keys(q)[0])
		p.SRem(ctx, c.queuesKey(), q)
		return nil
	})
	if err != nil {
		return err
	}
	if del.Val() == 0 {
		return notFound(q)
	}
	return nil
}

// Purge deletes every message in queue q and returns how many; the queue's
// attributes and counters stay.
func (c *Client) Purge(ctx context.Context, q string) (int64, error) {
	if err := CheckName(q); err != nil {
		return 0, err
	}
	n, err := purgeScript.Run(ctx, c.rdb, c.keys(q)).Int64()
	if err != nil {
		return 0, err
	}
	if n < 0 {
		return 0, notFound(q)
	}
	return n, nil
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
