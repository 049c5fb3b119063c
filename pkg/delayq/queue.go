package delayq

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

func (c *Client) checkPolicy(ctx context.Context, q string, maxReceives int, dead string) error {
	switch {
	case maxReceives < 0:
		return fmt.Errorf("max receives %d: must not be negative: %w", maxReceives, errInvalidValue)
	case maxReceives > 0 && dead == "":
		return fmt.Errorf("max receives needs a dead-letter queue: %w", errInvalidValue)
	case maxReceives == 0 && dead != "":
		return fmt.Errorf("a dead-letter queue needs max receives: %w", errInvalidValue)
	case dead == "":
		return nil
	case dead == q:
		return fmt.Errorf("queue %q cannot be its own dead-letter queue: %w", q, errInvalidValue)
	case c.tag:
		return fmt.Errorf("dead-letter queues are not supported with hash tags (Redis Cluster): the move would cross slots: %w", errInvalidValue)
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

// Create makes queue q with the attributes a (VT, Delay, MaxSize,
// MaxReceives and DeadLetter; the others are ignored). A zero field means
// the default: a vt of 30s, no delay, a maxsize of 65536, no dead-letter
// policy; a VT of -1 means a vt of 0 and a MaxSize of -1 no limit. vt and
// delay are whole seconds up to 9999999, maxsize 1024 to 65536 UTF-16
// units. It fails with ErrQueueExists if q exists. The dead-letter queue,
// if any, must exist (MaxReceives > 0 and DeadLetter are given together).
func (c *Client) Create(ctx context.Context, q string, a Attributes) error {
	if err := CheckName(q); err != nil {
		return err
	}
	vt, given, err := checkOption("vt", a.VT, time.Second)
	if err != nil {
		return err
	}
	if !given {
		vt = defaultVT
	}
	delay, _, err := checkOption("delay", a.Delay, time.Second)
	if err != nil {
		return err
	}
	maxSize := a.MaxSize
	if maxSize == 0 {
		maxSize = defaultMaxSize
	}
	if err := checkMaxSize(maxSize); err != nil {
		return err
	}
	if err := c.checkPolicy(ctx, q, a.MaxReceives, a.DeadLetter); err != nil {
		return err
	}
	maxrc := ""
	if a.MaxReceives > 0 {
		maxrc = strconv.Itoa(a.MaxReceives)
	}
	// A registry of the wrong type, or a user who may not SADD it, would
	// refuse the SADD after the queue's hash was written: check first.
	if err := c.checkRegistry(ctx, "sadd", q); err != nil {
		return err
	}
	// Then the registry, only once the queue exists: a failed script
	// (a wrong-type hash, no permission) leaves no name behind, and this
	// user may SADD (checked above, and by the script on Redis 7).
	created, err := createScript.Run(ctx, c.rdb, c.keys(q)[1:], int64(vt/time.Second), int64(delay/time.Second), maxSize, maxrc, a.DeadLetter, c.queuesKey(), q).Int64()
	if err != nil {
		return err
	}
	if created == 0 {
		return &QueueError{Queue: q, Err: ErrQueueExists}
	}
	return c.rdb.SAdd(ctx, c.queuesKey(), q).Err()
}

// checkRegistry fails when <ns>:QUEUES exists and is not a set, or when
// this user may not write it with command (SADD for a create, SREM for a
// delete) and q, before the script that changes the queue: a refusal then
// changes nothing. Redis 7 scripts check the command themselves
// (acl_check_cmd); Redis 6.2 scripts cannot, and the registry lives in
// another slot on a Cluster. So the command is queued between MULTI and
// DISCARD on a connection to the registry's node: the server checks a
// command's ACL when it queues it, and DISCARD runs nothing. The command
// is sent only once MULTI was accepted (else it would run at once), so
// this takes two round trips; a user who may not run MULTI is not checked
// this way.
func (c *Client) checkRegistry(ctx context.Context, command, q string) error {
	var node *redis.Client
	switch r := c.rdb.(type) {
	case *redis.Client:
		node = r
	case *redis.ClusterClient:
		m, err := r.MasterForKey(ctx, c.queuesKey())
		if err != nil {
			return err
		}
		node = m
	}
	if node == nil {
		return c.registryType(c.rdb.Type(ctx, c.queuesKey()))
	}
	conn := node.Conn()
	defer conn.Close()
	var ty *redis.StatusCmd
	var multi *redis.Cmd
	_, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
		ty = p.Type(ctx, c.queuesKey())
		multi = p.Do(ctx, "multi")
		return nil
	})
	if multi.Err() != nil {
		if err := c.registryType(ty); err != nil {
			return err
		}
		if permissionError(multi.Err()) {
			return nil
		}
		return multi.Err()
	}
	// The connection is in a transaction: DISCARD it whatever happens (a
	// cancelled ctx must not leave it queueing).
	wctx := context.WithoutCancel(ctx)
	var queued *redis.Cmd
	_, err2 := conn.Pipelined(wctx, func(p redis.Pipeliner) error {
		queued = p.Do(wctx, command, c.queuesKey(), q)
		p.Do(wctx, "discard")
		return nil
	})
	if err := c.registryType(ty); err != nil {
		return err
	}
	if err := queued.Err(); err != nil && permissionError(err) {
		return fmt.Errorf("%w (%s %s): nothing written", err, strings.ToUpper(command), c.queuesKey())
	}
	if err != nil {
		return err
	}
	return err2
}

// registryType fails when the registry's TYPE is not a set (nor none).
func (c *Client) registryType(ty *redis.StatusCmd) error {
	t, err := ty.Result()
	if err != nil {
		return err
	}
	if t != "set" && t != "none" {
		return fmt.Errorf("WRONGTYPE %s is a %s, not a set (RSMQ's registry of queue names): nothing written", c.queuesKey(), t)
	}
	return nil
}

// permissionError reports an ACL refusal: NOPERM for a command sent
// alone.
func permissionError(err error) bool {
	return redis.HasErrorPrefix(err, "NOPERM")
}

// Queues returns one page of the namespace's queue names, as go-redis's
// SScan does: one SSCAN of the registry <ns>:QUEUES from cursor (0 to
// start), with match a glob of names ("" for all) and count its COUNT
// hint (0: Redis's default). The next cursor is 0 at the end. A name may
// come twice in one walk; each call is one bounded server call.
func (c *Client) Queues(ctx context.Context, cursor uint64, match string, count int64) ([]string, uint64, error) {
	return c.rdb.SScan(ctx, c.queuesKey(), cursor, match, count).Result()
}

// registryPages calls fn with each page of the registry's names, read with
// SSCAN (stepCount a call, so each call is bounded), every name once
// (SSCAN may return a member twice).
func (c *Client) registryPages(ctx context.Context, fn func(page []string) error) error {
	seen := map[string]bool{}
	var cursor uint64
	for {
		page, next, err := c.Queues(ctx, cursor, "", stepCount)
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
// Create and SetAttributes take the settings (VT to DeadLetter) and ignore
// the rest; their zero values mean a default there (see Create and
// SetAttributes), not 0.
type Attributes struct {
	Name    string
	VT      time.Duration // visibility timeout of received messages, whole seconds
	Delay   time.Duration // delay of each push, whole seconds
	MaxSize int           // largest body in UTF-16 units; -1: unlimited
	// MaxReceives > 0 with DeadLetter set: a message received MaxReceives
	// times moves to queue DeadLetter instead of being received again.
	MaxReceives int
	DeadLetter  string
	TotalRecv   int64
	TotalSent   int64
	Created     time.Time
	Modified    time.Time
}

// attributes reads stats.lua's vt, delay, maxsize, totalrecv, totalsent,
// created, modified, maxreceives and deadletter.
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
	// Now (nil when nothing is ready), with its ID, VisibleAt and Sent
	// (RSMQ's "sent", from the id) only. OldestReadyAge is Now minus its
	// VisibleAt.
	OldestReady    *Message
	OldestReadyAge time.Duration
	// TotalDead counts the messages this queue moved to its dead-letter
	// queue (received too often) since it was created: chatq's field
	// totaldead, which rsmq neither reads nor writes (purge keeps it).
	TotalDead int64
	// DeadLetterMissing is true when DeadLetter names a queue that does not
	// exist: the policy is off (receive delivers such messages again rather
	// than lose them) until that queue is created again.
	DeadLetterMissing bool
	// Err is, in a result of StatsEach, why this queue's stats could not
	// be read (ErrQueueNotFound, a key of the wrong type); the other
	// fields but Name are then zero.
	Err error
}

// Stats returns queue q's attributes and counts in one read-only script
// (RSMQ's getQueueAttributes),
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
	if len(a) > 19 {
		s.TotalDead = num(a[19])
	}
	s.NextVisible = msTime(str(a[15]))
	s.SplitExact = num(a[16]) == 1
	// A stale index (rsmq deleted a message chatq had received) must not
	// make the counts impossible.
	s.InFlight = min(max(inflight, 0), hidden)
	s.Delayed = hidden - s.InFlight
	if id := str(a[17]); id != "" {
		s.OldestReady = &Message{ID: id, VisibleAt: scoreTime(str(a[18])), Sent: sentAt(id)}
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

// SetAttributes changes queue q's settings and its modified time
// (RSMQ's setQueueAttributes): the fields of a from VT to DeadLetter that
// are not zero; the others stay. To set 0, give -1: a VT or Delay of -1
// sets 0, a MaxSize of -1 sets no limit, a MaxReceives of -1 (DeadLetter
// "") removes the dead-letter policy. MaxReceives > 0 and DeadLetter are
// set together.
func (c *Client) SetAttributes(ctx context.Context, q string, a Attributes) error {
	if err := CheckName(q); err != nil {
		return err
	}
	var args []any
	if vt, given, err := checkOption("vt", a.VT, time.Second); err != nil {
		return err
	} else if given {
		args = append(args, "vt", int64(vt/time.Second))
	}
	if delay, given, err := checkOption("delay", a.Delay, time.Second); err != nil {
		return err
	} else if given {
		args = append(args, "delay", int64(delay/time.Second))
	}
	if a.MaxSize != 0 {
		if err := checkMaxSize(a.MaxSize); err != nil {
			return err
		}
		args = append(args, "maxsize", a.MaxSize)
	}
	if a.MaxReceives != 0 || a.DeadLetter != "" {
		maxrc := max(a.MaxReceives, 0) // -1: no policy
		if a.MaxReceives < -1 {
			maxrc = a.MaxReceives // refused by checkPolicy
		}
		if err := c.checkPolicy(ctx, q, maxrc, a.DeadLetter); err != nil {
			return err
		}
		s := ""
		if maxrc > 0 {
			s = strconv.Itoa(maxrc)
		}
		args = append(args, "maxreceives", s, "deadletter", a.DeadLetter)
	}
	if len(args) == 0 {
		return fmt.Errorf("no attribute to set: %w", errInvalidValue)
	}
	n, err := setScript.Run(ctx, c.rdb, c.keys(q)[1:], args...).Int64()
	if err != nil {
		return err
	}
	if n == 0 {
		return notFound(q)
	}
	if a.MaxReceives != 0 || a.DeadLetter != "" {
		c.remember(q, a.DeadLetter)
	}
	return nil
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
