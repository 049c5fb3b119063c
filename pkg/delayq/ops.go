package delayq

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"
)

// notEmptyError is a guarded delete or purge that found messages
// messages in queue, more than it was allowed to destroy.
type notEmptyError struct {
	queue    string
	messages int64
}

func (e *notEmptyError) Error() string {
	return fmt.Sprintf("queue %q holds %d messages: nothing deleted", e.queue, e.messages)
}

func (e *notEmptyError) Is(target error) bool { return target == ErrQueueNotEmpty }

// Delete removes queue q and its messages (RSMQ deleteQueue) if it holds
// at most max messages (-1: any number), and returns how many it held.
// The script checks the keys' types and (Redis 7) this user's permissions
// before it UNLINKs anything; UNLINK frees a big queue in the background,
// so it is O(1) whatever the queue holds. Then the name leaves the registry
// (a second command: on Redis Cluster it lives in another slot). The count
// is checked inside the deleting script, so a message pushed after the
// caller looked (asked someone, say) is never deleted unasked: with more
// than max messages it changes nothing, and returns how many q holds with
// ErrQueueNotEmpty.
func (c *Client) Delete(ctx context.Context, q string, max int64) (int64, error) {
	if err := CheckName(q); err != nil {
		return 0, err
	}
	if err := c.checkRegistry(ctx); err != nil {
		return 0, err
	}
	a, err := run(ctx, c.rdb, deleteScript, c.keys(q), c.queuesKey(), q, max)
	if err != nil {
		return 0, err
	}
	if str(a[0]) == "notempty" {
		return num(a[1]), &notEmptyError{queue: q, messages: num(a[1])}
	}
	// A name without a queue (rsmq's deleteQueue removes it too) is
	// dropped from the registry either way.
	if err := c.rdb.SRem(ctx, c.queuesKey(), q).Err(); err != nil {
		return 0, err
	}
	if str(a[0]) == "notfound" {
		return 0, notFound(q)
	}
	return num(a[1]), nil
}

// Purge deletes every message of queue q if it holds at most max messages
// (-1: any number), and returns how many it deleted; the queue's
// attributes and counters stay. One atomic script that UNLINKs the queue's
// keys (big values are freed in a background thread) and writes the
// attributes back: O(1) server time whatever the queue holds. A push right
// after it is kept. As in Delete the count is checked in the purging
// script: with more than max messages it changes nothing, and returns how
// many q holds with ErrQueueNotEmpty.
func (c *Client) Purge(ctx context.Context, q string, max int64) (int64, error) {
	if err := CheckName(q); err != nil {
		return 0, err
	}
	a, err := run(ctx, c.rdb, purgeScript, c.keys(q), max)
	if err != nil {
		return 0, err
	}
	switch str(a[0]) {
	case "notempty":
		return num(a[1]), &notEmptyError{queue: q, messages: num(a[1])}
	case "notfound":
		return 0, notFound(q)
	}
	return num(a[1]), nil
}

// DeadLetterSources returns, sorted, the queues of the registry whose
// dead-letter queue is dlq. It pages through the registry with SSCAN (100
// names a call) and reads each page's policies with one pipeline of HGETs,
// so every server call is bounded whatever the number of queues.
func (c *Client) DeadLetterSources(ctx context.Context, dlq string) ([]string, error) {
	if err := CheckName(dlq); err != nil {
		return nil, err
	}
	var out []string
	err := c.registryPages(ctx, func(page []string) error {
		var qs []string
		for _, q := range page {
			if q != dlq && CheckName(q) == nil {
				qs = append(qs, q)
			}
		}
		if len(qs) == 0 {
			return nil
		}
		cmds, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, q := range qs {
				p.HGet(ctx, c.keys(q)[1], "deadletter")
			}
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) && !isReplyError(err) {
			return err
		}
		for i, cmd := range cmds {
			// A key of the wrong type names no dead-letter queue.
			if v, err := cmd.(*redis.StringCmd).Result(); err == nil && v == dlq {
				out = append(out, qs[i])
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}

// statsPipeline is how many stats calls StatsEach sends in one pipeline:
// Redis runs a pipeline's calls back to back, so this bounds how long one
// round trip holds the server (each call is O(log n), tens of µs).
const statsPipeline = 20

// StatsEach returns the Stats of each queue of qs, in order, reading them
// with pipelines of the stats script (20 queues a round trip; each script
// call is O(log n)) and, for the dead-letter queues named, pipelines of
// HEXISTS. An error about one queue (not found, a key of the wrong type) is
// in its Stats.Err; an error of the connection is returned. It does not
// rebuild an incomplete index of received messages (SplitExact false).
func (c *Client) StatsEach(ctx context.Context, qs []string) ([]Stats, error) {
	out := make([]Stats, len(qs))
	for i, q := range qs {
		out[i].Name = q
		out[i].Err = CheckName(q)
	}
	for lo := 0; lo < len(qs); lo += statsPipeline {
		if err := c.statsPage(ctx, out[lo:min(lo+statsPipeline, len(qs))]); err != nil {
			return nil, err
		}
	}
	// Which dead-letter queues exist: those read above, and the rest asked.
	exists := map[string]bool{}
	for _, r := range out {
		if r.Err == nil {
			exists[r.Name] = true
		}
	}
	var ask []string
	for _, r := range out {
		if r.Err == nil && r.DeadLetter != "" && !exists[r.DeadLetter] && !slices.Contains(ask, r.DeadLetter) {
			ask = append(ask, r.DeadLetter)
		}
	}
	for lo := 0; lo < len(ask); lo += maxBatch {
		page := ask[lo:min(lo+maxBatch, len(ask))]
		cmds, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, q := range page {
				p.HExists(ctx, c.keys(q)[1], "vt")
			}
			return nil
		})
		if err != nil && !isReplyError(err) {
			return nil, err
		}
		for i, cmd := range cmds {
			exists[page[i]] = cmd.(*redis.BoolCmd).Val()
		}
	}
	for i := range out {
		if r := &out[i]; r.Err == nil && r.DeadLetter != "" {
			r.DeadLetterMissing = !exists[r.DeadLetter]
			c.remember(r.Name, r.DeadLetter)
		}
	}
	return out, nil
}

// statsPage runs the stats script for each queue of page in one pipeline
// (by SHA; loaded first when the server does not have it).
func (c *Client) statsPage(ctx context.Context, page []Stats) error {
	for try := 0; ; try++ {
		cmds, err := c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, r := range page {
				if r.Err == nil {
					p.EvalSha(ctx, statsScript.Hash(), c.keys(r.Name))
				}
			}
			return nil
		})
		if err != nil && !isReplyError(err) {
			return err
		}
		if try == 0 && slices.ContainsFunc(cmds, func(cmd redis.Cmder) bool {
			return cmd.Err() != nil && strings.HasPrefix(cmd.Err().Error(), "NOSCRIPT")
		}) {
			if err := statsScript.Load(ctx, c.rdb).Err(); err != nil {
				return err
			}
			continue
		}
		i := 0
		for j := range page {
			if page[j].Err != nil {
				continue
			}
			cmd := cmds[i].(*redis.Cmd)
			i++
			v, err := cmd.Result()
			if err != nil {
				page[j].Err = fmt.Errorf("queue %q: %w", page[j].Name, err)
				continue
			}
			a, _ := v.([]any)
			if s, err := parseStats(page[j].Name, a); err != nil {
				page[j].Err = err
			} else {
				page[j] = *s
			}
		}
		return nil
	}
}

// isReplyError reports an error the server replied with (WRONGTYPE, a
// script's error), as opposed to one of the connection.
func isReplyError(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, redis.ErrClosed)
}
