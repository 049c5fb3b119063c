package asynq

import (
	"slices"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/pkg/queues"
)

// access lists, per operation, the commands it sends besides the script
// commands (EVALSHA, EVAL, SCRIPT LOAD), its scripts' own calls included,
// and whether it writes.
var access = []struct {
	op       string
	write    bool
	commands string
}{
	{"Discover", false, "sscan"},
	{"Counts", false, "exists hget lindex llen scard sismember smembers time zcard zcount"},
	{"Scan", false, "hmget lrange llen sismember zcard zrange zscore"},
	{"Get", false, "exists hmget sismember zscore"},
	{"Retry", true, "exists hget hset lpush sismember type zrem zscore"},
	{"Remove", true, "del exists get hmget llen lpos lrem sismember srem time type zcard zrem zscore"},
	{"Redrive", true, "exists hget hset lpush sismember type zrange zrem zscore"},
	{"Pause", true, "exists set sismember time"},
	{"Resume", true, "del exists sismember"},
	{"Recover", true, "del exists expireat get hmget hset incr llen lpos lrem set sismember time type zadd zcard zrange zrem zscore"},
}

// Access lists what each operation asks of the server, for chatq acl:
// the commands (every operation also needs EVALSHA, EVAL and SCRIPT LOAD,
// not listed) and the keys: asynq:queues and the keys of every queue,
// asynq:{NAME}:..., under chatq's prefix. Writing scripts also call
// ACL-permission checks: on Redis 7 they need no command of their own; on
// 6.2 they probe a ZREM with ZSCORE (luascript.Permitted), listed.
func (k *Kind) Access() []queues.Access {
	p := keyspace.Quote(k.prefix)
	keys := []string{p + "asynq:queues", p + "asynq:{*}:*"}
	out := make([]queues.Access, 0, len(access))
	for _, a := range access {
		cmds := strings.Fields(a.commands)
		slices.Sort(cmds)
		ks := slices.Clone(keys)
		if a.op == "Discover" {
			ks = ks[:1]
		}
		out = append(out, queues.Access{Op: a.op, Write: a.write, Commands: slices.Compact(cmds), Keys: ks})
	}
	return out
}
