// Package chat is group chat on Redis that works while recipients are
// offline: the multiple-recipient pull messaging of "Redis in Action"
// §6.5.2, made atomic with Lua scripts and safe under concurrency. A chat
// has members; each message gets the next id of its chat; a member reads
// what they have not seen, which then counts as seen, and a message is
// deleted once every member has seen it.
//
//	chats := chat.New(rdb, chat.Options{Prefix: "app:"})
//	first := "lunch at noon?"
//	c, err := chats.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff", "jenny"}, Message: &first})
//	_, err = chats.Send(ctx, c.ChatID, "jeff", "yes") // message 2
//	news, err := chats.Pending(ctx, "jenny", chat.PendingOptions{})
//	for _, cm := range news { // per chat, oldest first; now seen
//		for _, m := range cm.Messages {
//			fmt.Println(cm.ChatID, m.ID, m.Sender, m.Message)
//		}
//	}
//
// Watch follows a user's chats as messages arrive (Pub/Sub), Chats and
// Users page through what the server holds (SCAN style), and Access says
// what each method needs of an ACL user.
//
// # Keys
//
// Every key starts with Options.Prefix. ID is a chat id, USER a user name;
// the braces are literal hash tags, so a chat's own keys share one Redis
// Cluster slot.
//
//	chat:{ID}     ZSET  member -> highest message id the member has seen
//	                    (the truth about membership and seen ids)
//	msgs:{ID}     ZSET  message JSON -> message id
//	ids:{ID}      STRING  last message id of the chat (INCR)
//	sent:{ID}:<minute>  HASH  token -> the answer of a SendWith, Create or
//	                      JoinWith with a token made in that minute of the
//	                      client's clock (Unix ms / 60000); a repeat reads
//	                      this minute's hash and the 10 before it (a
//	                      first try, SendOptions.FirstTry, none), and the
//	                      first write sets its hash to live 11 minutes
//	seen:{USER}   ZSET  chat id -> seen id: the index of a user's chats
//	ids:chat:     STRING  last automatic chat id (INCR), never deleted
//	{ids:chat:}:T:<minute>  HASH  token -> the automatic id a Create with
//	                      a token took in that minute (in ids:chat:'s
//	                      slot), likewise
//
// A stored message is the JSON object
//
//	{"id":5,"ts":1795266822.123,"sender":"joe","message":"…"}
//
// with the keys in that order. The sender and message part is encoded in Go
// (encoding/json, no HTML escaping); the id and ts are spliced in by the
// script that allocates the id, so Redis and the embedded server store the
// same bytes. ts is the server's TIME, in seconds with milliseconds.
//
// # Round trips and atomicity
//
// Every script that writes checks what can fail (key types, the counter's
// value, and on Redis >= 7 the caller's ACL permissions) before its first
// write, so a failed call writes nothing.
//
//   - Send: 1 round trip, one script on the {ID} slot (check the chat and
//     the sender, PUBLISH, INCR ids:{ID}, ZADD msgs:{ID}). No lock.
//   - Create: 1 round trip with an id (2 on a cluster), 3 without (TYPE of
//     the members' seen:{USER}, INCR ids:chat:, the script). The script
//     checks that none of the chat's keys exists, adds the members and
//     sends the first message atomically. With a token the id is taken by
//     a script (newid.lua) that records it, in the same round trip count.
//   - Join, Leave: 1 round trip, one script (2 and 3 on a cluster); a
//     leave deletes at most ChunkSize seen messages per call.
//   - Pending reads, then marks what it returns (MarkSeen), never before:
//     ZRANGE seen:{USER} (1000 entries per call); below 8 chats one
//     pipeline of the read-only fetch script (at most 200 messages a
//     chat); from 8 chats on one MGET of the chats' ids:{ID}, then for the
//     chats with news only, one pipeline of plain ZSCORE chat:{ID} and
//     ZRANGEBYSCORE msgs:{ID}; more messages with plain ZRANGEBYSCOREs of
//     ChunkSize; then one pipeline of the mark script per chat (on a
//     standalone server, from 2 chats on, marks.lua for 50 chats per
//     call), which on a standalone server also moves seen:{USER} (on a
//     cluster one ZADD after it). A lost reply to the marking leaves the
//     messages returned with the error: delivery is at-least-once.
//   - Members: 1 round trip per 500 members. History: 1 per ChunkSize
//     messages, its filters (HistoryOptions) matched in Go on each chunk. UserChats: 2. Stats: 1 for any number of chats. Chats,
//     Users: one SCAN per call.
//
// chat:{ID} holds the authoritative seen ids, and the mark script moves
// them on the {ID} slot; seen:{USER} is an index of the user's chats. On a
// standalone server, create, join, leave and mark also update seen:{USER}
// inside their script (all or nothing). On a cluster (Options.Cluster, set
// for a *redis.ClusterClient) seen:{USER} lives in another slot, so the
// caller checks its type first and updates it after the script: a failed
// command writes nothing. A stale seen:{USER} entry (possible on a
// cluster when a join races a leave of the same user) is harmless: reads
// skip chats the user is not a member of.
//
// Seen ids only move forward (ZADD … GT) and marking never re-adds a
// member who left, to chat:{ID} or to seen:{USER} (ZADD … XX: it moves
// existing entries, never creates one), whatever order racing readers and
// leaves run in.
//
// # Names
//
// Chat ids and user names are checked before any Redis call: non-empty,
// valid UTF-8, no whitespace or control characters, no '{' or '}' (they
// would move the hash tag); chat ids also no ':'. A bad one is an error
// matching ErrInvalid.
//
// A stored value that is not a message is returned in
// ChatMessages.Skipped and marked with the others (each member is told
// once); a chat that cannot be read is returned with Error set and marks
// nothing, without hiding the other chats.
package chat
