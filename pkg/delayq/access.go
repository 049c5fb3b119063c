package delayq

import (
	"slices"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
)

// Access is what one operation asks of the server (chatq acl).
type Access struct {
	Op       string   // the method's name, e.g. "Push", or "Receive (wait)"
	Write    bool     // whether it writes
	Commands []string // Redis commands sent, the scripts' own calls included, lower case, sorted
	Keys     []string // key glob patterns with the prefix and namespace applied and glob-escaped
	Channels []string // Pub/Sub channel patterns, likewise
}

// access lists, per operation, the Redis commands it sends besides the
// script commands (EVALSHA, EVAL, SCRIPT LOAD), its scripts' own calls
// included (access_test.go checks them against the scripts and against
// what each operation sends), and whether it writes and uses the realtime
// channels (PUBLISH, SUBSCRIBE). Every operation reads and writes only keys
// under the namespace.
var access = []struct {
	op            string
	write, pubsub bool
	commands      string
}{
	{"Create", true, false, "discard exists hexists hset multi sadd time type unlink"},
	{"SetAttributes", true, false, "exists hdel hmget hset time"},
	{"Stats", false, false, "hexists hmget time zcard zcount zrange zrangebyscore"},
	{"StatsEach", false, false, "hexists hmget time zcard zcount zrange zrangebyscore"},
	{"Reindex", true, false, "hdel hexists hget hmget hset time type unlink zadd zscan"},
	{"Queues", false, false, "sscan"},
	{"DeadLetterSources", false, false, "hget sscan"},
	{"Delete", true, false, "discard exists multi srem type unlink zcard"},
	{"Purge", true, false, "hmget hset type unlink zcard"},
	// Push and PushMany with a token also HGET its record in the hashes
	// <ns>:<q>:T:<minute>, HLEN its minute's hash, HSET it there and
	// PEXPIRE the hash; a PushMany
	// of more than one batch reads Stats first.
	{"Push", true, true, "hget hincrby hlen hmget hset pexpire publish time type zadd zcard"},
	{"PushMany", true, true, "hexists hget hincrby hlen hmget hset pexpire publish time type zadd zcard zcount zrange zrangebyscore"},
	// A receive whose caller left releases what it claimed (retry.lua).
	{"Receive", true, true, receiveCommands},
	{"Receive (wait)", true, true, receiveCommands + " subscribe"},
	// Ack and Retry with a token also HGET, HLEN, HSET and PEXPIRE its record
	// (see Push); ChangeVisibility runs retry.lua without one.
	{"Ack", true, false, "hdel hget hlen hmget hset pexpire type zrem zscore"},
	{"ChangeVisibility", true, true, "hexists hget hlen hmget hset pexpire publish time type zadd zcard zscore"},
	{"Retry", true, true, "hexists hget hlen hmget hset pexpire publish time type zadd zcard zscore"},
	{"Peek", false, false, "hget hmget time zcount zrange zscore"},
	{"Get", false, false, "hmget time zscore"},
	{"Redrive", true, true, "hdel hexists hget hincrby hmget hset publish sscan time type zadd zcard zcount zrange zrank zrem zscore"},
	{"Export", false, false, "hmget hscan time zscore"},
	// Import reads Stats when the first message comes.
	{"Import", true, true, "hdel hexists hget hincrby hmget hset publish time type zadd zcard zcount zrange zrangebyscore zrem zscore"},
	// Stats first, then Receive (wait), ChangeVisibility and Ack.
	{"Work", true, true, receiveCommands + " subscribe zcount"},
}

// receiveCommands are what Receive sends: receive.lua's calls and
// retry.lua's; a receive with a token also HGETs, HLENs, HSETs and
// PEXPIREs its record (see Push).
const receiveCommands = "hdel hexists hget hincrby hlen hmget hset pexpire publish time type zadd zcard zrange zrangebyscore zrem zscore"

// Access lists what each operation of the client asks of the server: the
// Redis commands it sends, the key patterns and Pub/Sub channel patterns
// it uses under the client's prefix and namespace (chatq acl builds a
// least-privilege ACL user from it). Every operation also needs the script
// commands EVALSHA, EVAL and SCRIPT LOAD, which are not listed, and the
// connection's own (HELLO, PING).
func (c *Client) Access() []Access {
	ns := strings.TrimSuffix(c.ns, ":")
	keys := []string{keyspace.Quote(ns) + ":*"}
	chans := []string{keyspace.Quote(ns) + ":rt:*"}
	out := make([]Access, 0, len(access))
	for _, a := range access {
		cmds := strings.Fields(a.commands)
		slices.Sort(cmds)
		x := Access{Op: a.op, Write: a.write, Commands: slices.Compact(cmds), Keys: slices.Clone(keys)}
		if a.pubsub {
			x.Channels = slices.Clone(chans)
		}
		out = append(out, x)
	}
	return out
}
