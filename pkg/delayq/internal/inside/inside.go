// Package inside lets package delayqtest reach what package delayq keeps
// unexported: delayq fills these in when it is loaded.
package inside

import "github.com/redis/go-redis/v9"

var (
	// Client returns the Redis client of a *delayq.Client and its keys of
	// queue q: the ZSET, the HASH and chatq's index of received messages.
	Client func(c any) (rdb redis.UniversalClient, keys func(q string) []string)
	// Scripts returns the source of every Lua script of delayq by file
	// name (as sent to the server).
	Scripts func() map[string]string
)
