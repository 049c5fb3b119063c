package shardlist

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/base/names"
)

// Lists returns a page of the KEYs of the sharded lists under the prefix
// whose KEY matches the glob match ("" for all), go-redis SCAN style: start
// with cursor 0 and call again with the cursor returned until it is 0. Each
// call is one SCAN … COUNT count (on a cluster, of one master at a time).
// A page names each list once, but a list has several keys, so it may be
// named again by a later page, as SCAN may return a key twice: a caller
// that needs each once keeps a set. An emptied list keeps some of its keys
// and is listed. match may not hold '{' or '}' (ErrInvalid).
func (c *Client) Lists(ctx context.Context, cursor uint64, match string, count int64) ([]string, uint64, error) {
	if strings.ContainsAny(match, "{}") {
		return nil, 0, fmt.Errorf("invalid list key pattern %q: no '{' or '}': %w", match, ErrInvalid)
	}
	if match == "" {
		match = "*"
	}
	keys, next, err := keyspace.ScanPage(ctx, c.rdb, cursor, keyspace.Quote(c.prefix)+"{"+match+"}:*", count)
	if err != nil {
		return nil, 0, err
	}
	return keyspace.Names(keys, c.prefix, "{", isListKey, func(k string) bool { return names.ListKey(k) == nil }), next, nil
}

// isListKey reports whether tail, what follows a list's "{KEY}", is one of
// the list's keys.
func isListKey(tail string) bool {
	part, ok := strings.CutPrefix(tail, ":")
	if !ok {
		return false
	}
	switch part {
	case "first", "last", "mid", "size", "ver":
		return true
	}
	_, err := strconv.ParseInt(part, 10, 64)
	return err == nil
}

// Access is what one operation asks of the server (chatq acl).
type Access struct {
	Op       string   // the method's name, e.g. "LPush"
	Write    bool     // it may change the list
	Commands []string // Redis commands sent, the scripts' own calls included, lower case, sorted
	Keys     []string // key glob patterns with the prefix applied and glob-escaped
	Channels []string // Pub/Sub channel patterns, likewise (none here)
}

// Access lists, per method, what it asks of the server: what an ACL user
// needs to call it. Every list's keys match the one pattern <prefix>{*}:*.
// Left out, on purpose:
//
//   - CLIENT ID and CLIENT UNBLOCK, which BLPop and BRPop send to end a
//     wait at once when ctx ends; without them (CLIENT UNBLOCK can unblock
//     any client) the wait ends at its next slice instead.
//   - The SET that stores the mid count of a list written before the count
//     existed, done once by the first call that needs it (LLen, Info and
//     LRange included): a read-only user then reads such a list, with more
//     than 100 shards between its ends, only after a user who may write.
func (c *Client) Access() []Access {
	keys := []string{keyspace.Quote(c.prefix) + "{*}:*"}
	state := []string{"get", "llen", "type"} // state.lua, before every script
	run := []string{"eval", "evalsha"}       // a script, by SHA1 or by text
	// A list written before the mid count existed is counted (layout.lua)
	// and the count stored (setmid.lua) by the first push or pop.
	count := []string{"set"}
	// A push or pop with a token reads its record in the hashes
	// {KEY}:T:<minute> (HGET) and writes it (HSET, PEXPIRE).
	records := []string{"hget", "hlen", "hset", "pexpire"}
	push := join(state, run, count, records, []string{"incr", "llen", "set", "unlink"})
	pop := join(state, run, count, records, []string{"del", "incr", "lindex", "lrange", "ltrim", "set"})
	// A blocking pop: the pop script, then per wait a pipeline of the wake
	// script (by SHA1, loaded first) and BLMOVE of the end shard onto itself.
	wait := []string{"blmove", "evalsha", "script|load", "type"}
	read := join(state, run)
	return []Access{
		{Op: "LPush", Write: true, Commands: join(push, []string{"lpush"}), Keys: keys},
		{Op: "RPush", Write: true, Commands: join(push, []string{"rpush"}), Keys: keys},
		{Op: "LPop", Write: true, Commands: join(pop, []string{"lpop"}), Keys: keys},
		{Op: "RPop", Write: true, Commands: join(pop, []string{"rpop"}), Keys: keys},
		{Op: "BLPop", Write: true, Commands: join(pop, wait, []string{"lpop", "lpush"}), Keys: keys},
		{Op: "BRPop", Write: true, Commands: join(pop, wait, []string{"rpop", "rpush"}), Keys: keys},
		{Op: "LLen", Commands: read, Keys: keys},
		{Op: "Info", Commands: read, Keys: keys},
		{Op: "LRange", Commands: join(read, []string{"lrange"}), Keys: keys},
		{Op: "Layout", Commands: read, Keys: keys},
		{Op: "Lists", Commands: []string{"scan"}}, // SCAN reads no key: it names them
		{Op: "Delete", Write: true, Commands: join(state, run, count, []string{"incr", "llen", "set", "unlink"}), Keys: keys},
	}
}

// join returns the distinct commands of the lists, sorted.
func join(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// KeyPattern is the glob (SCAN MATCH) pattern of every Redis key of the
// list KEY, glob-escaped: what to look at with redis-cli --scan --pattern.
func (c *Client) KeyPattern(key string) string {
	return keyspace.Quote(c.prefix+"{"+key+"}") + ":*"
}
