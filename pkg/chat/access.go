package chat

import (
	"slices"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
)

// Access is what one operation asks of the server (chatq acl).
type Access struct {
	Op       string   // the method's name, e.g. "Send", or "Pending (peek)"
	Write    bool     // it may change a chat
	Commands []string // Redis commands sent, the scripts' own calls included, lower case, sorted
	Keys     []string // key glob patterns with the prefix applied and glob-escaped
	Channels []string // Pub/Sub channel patterns, likewise
}

// Access lists, per method, what it asks of the server: what an ACL user
// needs to call it. Every method that touches a chat may touch all of its
// keys (chat:{ID}, msgs:{ID}, ids:{ID}) and a user's seen:{USER}; Create
// also ids:chat:; Send, Create and Join also the records of calls with a
// token, the hashes sent:{ID}:<minute>, and Create the records of the ids
// it took, {ids:chat:}:T:<minute> (see idRecordKeys). Pending and Watch
// come twice: marking what they return seen, and reading only (peek, or
// Watch without Mark).
func (s *Client) Access() []Access {
	p := keyspace.Quote(s.prefix)
	keys := []string{p + "chat:{*}", p + "msgs:{*}", p + "ids:{*}", p + "seen:{*}"}
	sent := []string{p + "chat:sent"}
	// A script runs by EVALSHA, or by EVAL when the server lacks it; the
	// pipelined ones (fetch, mark, marks, trim) are loaded by SCRIPT LOAD.
	run := []string{"eval", "evalsha"}
	piped := []string{"evalsha", "script|load"}
	trim := join(piped, []string{"type", "zcount", "zrange", "zremrangebyrank"})
	// Pending's read: ZRANGE of seen:{USER}, the fetch script, and from 8
	// chats on MGET (GET per chat on a cluster) of ids:{ID} and plain
	// ZSCORE and ZRANGEBYSCORE.
	read := join(piped, []string{"zrange", "mget", "get", "zscore", "zrangebyscore", "exists", "type", "zcount"})
	// MarkSeen: the mark script (marks on a standalone server), a ZADD of
	// seen:{USER} on a cluster, then trim.
	mark := join(piped, trim, []string{"exists", "get", "type", "zadd", "zcount", "zrange", "zremrangebyrank", "zscore"})
	// A call with a token also reads its record in the hashes
	// sent:{ID}:<minute> (HGET) and writes it (HSET, PEXPIRE); a Create
	// with a token and no id the record of the id it took likewise.
	records := []string{"hget", "hlen", "hset", "pexpire"}
	recordKeys := append(slices.Clip(keys), p+"sent:{*}:*")
	idRecords := keyspace.Quote(s.idRecordBase()) + "*"
	return []Access{
		{Op: "Create", Write: true, Keys: append(slices.Clip(recordKeys), p+"ids:chat:", idRecords), Channels: sent,
			Commands: join(run, records, []string{"exists", "incr", "publish", "time", "type", "zadd"})},
		{Op: "Send", Write: true, Keys: recordKeys, Channels: sent,
			Commands: join(run, records, []string{"get", "incr", "publish", "time", "type", "zadd", "zscore"})},
		{Op: "Join", Write: true, Keys: recordKeys, Commands: join(run, records, []string{"get", "type", "zadd", "zscore"})},
		{Op: "Leave", Write: true, Keys: keys,
			Commands: join(run, trim, []string{"type", "unlink", "zcard", "zcount", "zrange", "zrem", "zremrangebyrank", "zscore"})},
		{Op: "Pending", Write: true, Keys: keys, Commands: join(read, mark)},
		{Op: "Pending (peek)", Keys: keys, Commands: read},
		{Op: "MarkSeen", Write: true, Keys: keys, Commands: mark},
		{Op: "Watch", Keys: keys, Channels: sent, Commands: join(read, []string{"subscribe"})},
		{Op: "Watch (mark)", Write: true, Keys: keys, Channels: sent, Commands: join(read, mark, []string{"subscribe"})},
		{Op: "UserChats", Keys: keys, Commands: join(piped, []string{"zrange", "exists", "get", "type", "zcount", "zrangebyscore", "zscore"})},
		{Op: "Members", Keys: keys, Commands: join(run, []string{"type", "zcount", "zrange"})},
		{Op: "History", Keys: keys, Commands: []string{"exists", "zrange"}},
		{Op: "Stats", Keys: keys, Commands: []string{"get", "zcard"}},
		{Op: "Chats", Commands: []string{"scan"}}, // SCAN reads no key: it names them
		{Op: "Users", Commands: []string{"scan"}},
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
