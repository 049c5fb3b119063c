// Package delayqtest helps tests and benchmarks of programs that use
// package delayq: it fills queues at sizes that pushing one by one would
// take minutes to reach, and gives the source of every Lua script for
// tools that attribute server time (SLOWLOG, commandstats) to a script by
// its SHA1. Nothing here is for real data.
package delayqtest

import (
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/delayq/internal/inside"
	"github.com/redis/go-redis/v9"
)

// FillOptions say what Fill stores.
type FillOptions struct {
	// Ready, Delayed and InFlight messages are stored in turn, in this
	// proportion (all zero: one of each). Delayed and in-flight messages
	// become due in an hour.
	Ready, Delayed, InFlight int
	// Body of every message (default "x").
	Body string
}

// fillBatch is how many messages each pipelined command of Fill carries:
// well under a millisecond of server time per command.
const fillBatch = 200

// Fill stores n synthetic messages in queue q of c, straight into RSMQ's
// layout and chatq's index with multi-member ZADD/HSET commands in
// pipelines. The queue must exist. It is not atomic and not for real data:
// ids are well formed (the server's time in microseconds, one per message,
// and 22 random characters) and the counters are kept consistent.
func Fill(ctx context.Context, c *delayq.Client, q string, n int, opt FillOptions) error {
	if opt.Ready == 0 && opt.Delayed == 0 && opt.InFlight == 0 {
		opt.Ready, opt.Delayed, opt.InFlight = 1, 1, 1
	}
	if opt.Ready < 0 || opt.Delayed < 0 || opt.InFlight < 0 {
		return fmt.Errorf("fill proportions must not be negative: %w", delayq.ErrInvalid)
	}
	if opt.Body == "" {
		opt.Body = "x"
	}
	if _, err := c.Stats(ctx, q); err != nil {
		return err
	}
	rdb, keysOf := inside.Client(c)
	keys := keysOf(q)
	t, err := rdb.Time(ctx).Result()
	if err != nil {
		return err
	}
	us := t.UnixMicro()
	now := t.UnixMilli()
	nowStr := strconv.FormatInt(now, 10)
	cycle := opt.Ready + opt.Delayed + opt.InFlight
	var inflight int64
	for done := 0; done < n; {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for k := 0; k < 10 && done < n; k++ {
				size := min(fillBatch, n-done)
				zs := make([]redis.Z, 0, size)
				var rs []redis.Z
				hs := make([]any, 0, 2*size)
				for i := 0; i < size; i++ {
					id := strconv.FormatInt(us, 36) + randomID()
					us++
					switch j := (done + i) % cycle; {
					case j < opt.Ready:
						zs = append(zs, redis.Z{Score: float64(now), Member: id})
						hs = append(hs, id, opt.Body)
					case j < opt.Ready+opt.Delayed:
						zs = append(zs, redis.Z{Score: float64(now + time.Hour.Milliseconds()), Member: id})
						hs = append(hs, id, opt.Body)
					default:
						zs = append(zs, redis.Z{Score: float64(now + time.Hour.Milliseconds()), Member: id})
						rs = append(rs, redis.Z{Score: float64(now + time.Hour.Milliseconds()), Member: id})
						hs = append(hs, id, opt.Body, id+":rc", "1", id+":fr", nowStr)
					}
				}
				p.ZAdd(ctx, keys[0], zs...)
				p.HSet(ctx, keys[1], hs...)
				if len(rs) > 0 {
					p.ZAdd(ctx, keys[2], rs...)
					inflight += int64(len(rs))
				}
				done += size
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	// The counters, as if each message had been pushed and received
	// by chatq: rsync follows totalrecv when the index was complete.
	return fillCountersScript.Run(ctx, rdb, keys, n, inflight).Err()
}

// randomID returns 22 random characters of a message id (hex digits, a
// subset of what ids hold).
func randomID() string {
	var b [11]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

var (
	//go:embed fill_counters.lua
	fillCountersLua    string
	fillCountersScript = luascript.New(fillCountersLua)
)

// Scripts returns the source of every Lua script of package delayq and of
// Fill by file name, as sent to the server, for tools that attribute
// server time (SLOWLOG, commandstats) to a script by its SHA1.
func Scripts() map[string]string {
	out := maps.Clone(inside.Scripts())
	out["fill_counters.lua"] = fillCountersLua
	return out
}
