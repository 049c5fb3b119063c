// Package chat is group chat on Redis that works while recipients are
// offline: the multiple-recipient pull messaging of "Redis in Action"
// §6.5.2, made atomic with Lua scripts and safe under concurrency.
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
//	seen:{USER}   ZSET  chat id -> seen id: the index of a user's chats
//	ids:chat:     STRING  last automatic chat id (INCR), never deleted
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
//     sends the first message atomically.
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
//   - Members: 1 round trip. History: 1 per ChunkSize messages. Chats: 2.
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

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/chatq-dev/chatq/internal/luascript"
	"github.com/chatq-dev/chatq/internal/names"
	"github.com/redis/go-redis/v9"
)

// Errors returned by the operations; test for them with errors.Is.
var (
	ErrChatNotFound = errors.New("chat not found")
	ErrChatExists   = errors.New("chat already exists")
	ErrNotMember    = errors.New("not a member of the chat")
	// ErrInvalidMessage is returned for a message that is not valid UTF-8,
	// which JSON could not carry byte for byte.
	ErrInvalidMessage = errors.New("message is not valid UTF-8")
	// ErrInvalid is matched (errors.Is) by the errors for an invalid chat
	// id or user name (see Names), returned before any Redis call. It is
	// the same value as delayq.ErrInvalid and shardlist.ErrInvalid.
	ErrInvalid = names.ErrInvalid
)

var (
	//go:embed create.lua
	createSrc    string
	createScript = luascript.New(createSrc)
	//go:embed send.lua
	sendSrc    string
	sendScript = luascript.New(sendSrc)
	//go:embed join.lua
	joinSrc    string
	joinScript = luascript.New(joinSrc)
	//go:embed leave.lua
	leaveSrc    string
	leaveScript = luascript.New(leaveSrc)
	//go:embed fetch.lua
	fetchSrc    string
	fetchScript = luascript.New(fetchSrc)
	//go:embed mark.lua
	markSrc    string
	markScript = luascript.New(markSrc)
	//go:embed marks.lua
	marksSrc    string
	marksScript = luascript.Build(func() string {
		return markSrc[:strings.LastIndex(strings.TrimSuffix(markSrc, "\n"), "\n")+1] + marksSrc
	})
	//go:embed trim.lua
	trimSrc    string
	trimScript = luascript.New(trimSrc)
	//go:embed members.lua
	membersSrc    string
	membersScript = luascript.New(membersSrc)
)

// DefaultChunkSize is the default of Options.ChunkSize.
const DefaultChunkSize = 500

// Options configure a Store.
type Options struct {
	// Prefix is put in front of every key and of the notification channel.
	Prefix string
	// Cluster keeps every script on one slot, updating seen:{USER}
	// separately. New sets it for a *redis.ClusterClient.
	Cluster bool
	// ChunkSize is the most messages one server call reads or deletes
	// (DefaultChunkSize when 0), so that no call blocks the server for
	// long whatever the size of a chat: bigger reads and deletions take
	// several calls.
	ChunkSize int
}

// Store runs chat operations on a Redis server.
type Store struct {
	rdb     redis.UniversalClient
	prefix  string
	cluster bool
	chunk   int
}

// New returns a Store that uses c.
func New(c redis.UniversalClient, opts Options) *Store {
	_, isCluster := c.(*redis.ClusterClient)
	chunk := opts.ChunkSize
	if chunk <= 0 {
		chunk = DefaultChunkSize
	}
	return &Store{rdb: c, prefix: opts.Prefix, cluster: opts.Cluster || isCluster, chunk: chunk}
}

func (s *Store) chatKey(id string) string   { return s.prefix + "chat:{" + id + "}" }
func (s *Store) msgsKey(id string) string   { return s.prefix + "msgs:{" + id + "}" }
func (s *Store) idsKey(id string) string    { return s.prefix + "ids:{" + id + "}" }
func (s *Store) seenKey(user string) string { return s.prefix + "seen:{" + user + "}" }
func (s *Store) chatIDsKey() string         { return s.prefix + "ids:chat:" }

// Channel is the Pub/Sub channel every sent message is announced on (the
// payload is the chat id), which Watch listens to.
func (s *Store) Channel() string { return s.prefix + "chat:sent" }

// Member is a user in a chat, the highest message id they have seen and
// how many of the stored messages they have not.
type Member struct {
	User   string `json:"user"`
	SeenID int64  `json:"seen_id"`
	Unread int64  `json:"unread"`
}

// CreateRequest describes a new chat.
type CreateRequest struct {
	From string   // the sender, a member too
	To   []string // the other members
	ID   string   // the chat id; "" takes the next from ids:chat:
	// Message, when not nil, is sent by From as message 1.
	Message *string
}

// Created is the result of Create.
type Created struct {
	ChatID    string
	MessageID int64 // 0 when no message was sent
}

// Create makes a chat whose members are From and To, each with seen id 0,
// and sends the first message when there is one. It fails with
// ErrChatExists, writing nothing, when a chat with ID exists. Without ID
// the chat id is the next value of ids:chat: (skipping ids taken by chats
// created with an explicit id).
func (s *Store) Create(ctx context.Context, req CreateRequest) (Created, error) {
	if err := names.User(req.From); err != nil {
		return Created{}, err
	}
	members := []string{req.From}
	dup := map[string]bool{req.From: true}
	for _, u := range req.To {
		if err := names.User(u); err != nil {
			return Created{}, err
		}
		if !dup[u] {
			dup[u] = true
			members = append(members, u)
		}
	}
	tail := ""
	if req.Message != nil {
		var err error
		if tail, err = messageTail(req.From, *req.Message); err != nil {
			return Created{}, err
		}
	}
	if req.ID != "" {
		if err := names.Chat(req.ID); err != nil {
			return Created{}, err
		}
	}
	// The script checks the members' seen:{USER} itself, but on a cluster
	// they are written after it, and an automatic id is taken before it:
	// check them first, so that a bad one fails the create with nothing
	// written.
	if s.cluster || req.ID == "" {
		if err := s.checkIndexes(ctx, members); err != nil {
			return Created{}, err
		}
	}
	if req.ID != "" {
		return s.create(ctx, req.ID, members, tail)
	}
	// An automatic id can collide with a chat created with an explicit
	// id; take the next one then.
	for range 100 {
		n, err := s.rdb.Incr(ctx, s.chatIDsKey()).Result()
		if err != nil {
			return Created{}, err
		}
		c, err := s.create(ctx, strconv.FormatInt(n, 10), members, tail)
		if !errors.Is(err, ErrChatExists) {
			return c, err
		}
	}
	return Created{}, fmt.Errorf("no free chat id after 100 tries of %s", s.chatIDsKey())
}

// checkIndexes fails when a member's seen:{USER} is not a sorted set.
func (s *Store) checkIndexes(ctx context.Context, members []string) error {
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, u := range members {
			p.Type(ctx, s.seenKey(u))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, c := range cmds {
		if kind := c.(*redis.StatusCmd).Val(); kind != "zset" && kind != "none" {
			return fmt.Errorf("WRONGTYPE %s is a %s, not a user's chats (zset)", s.seenKey(members[i]), kind)
		}
	}
	return nil
}

func (s *Store) create(ctx context.Context, id string, members []string, tail string) (Created, error) {
	keys := []string{s.chatKey(id), s.msgsKey(id), s.idsKey(id)}
	if !s.cluster {
		for _, u := range members {
			keys = append(keys, s.seenKey(u))
		}
	}
	args := []any{id, s.Channel(), tail}
	for _, u := range members {
		args = append(args, u)
	}
	res, err := createScript.Run(ctx, s.rdb, keys, args...).Result()
	if err != nil {
		return Created{}, err
	}
	if code, ok := res.(int64); ok && code == -1 {
		return Created{}, fmt.Errorf("chat %s: %w", id, ErrChatExists)
	}
	mid, _, err := idAndTS(res)
	if err != nil {
		return Created{}, err
	}
	if s.cluster {
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, u := range members {
				p.ZAddArgs(ctx, s.seenKey(u), redis.ZAddArgs{GT: true, Members: []redis.Z{{Score: 0, Member: id}}})
			}
			return nil
		})
		if err != nil {
			return Created{ChatID: id, MessageID: mid}, err
		}
	}
	return Created{ChatID: id, MessageID: mid}, nil
}

// Send appends message to the chat as sender and returns its id. It fails
// with ErrChatNotFound or ErrNotMember, writing nothing.
func (s *Store) Send(ctx context.Context, chatID, sender, message string) (int64, error) {
	if err := names.Chat(chatID); err != nil {
		return 0, err
	}
	if err := names.User(sender); err != nil {
		return 0, err
	}
	tail, err := messageTail(sender, message)
	if err != nil {
		return 0, err
	}
	res, err := sendScript.Run(ctx, s.rdb,
		[]string{s.chatKey(chatID), s.msgsKey(chatID), s.idsKey(chatID)},
		sender, tail, s.Channel(), chatID).Result()
	if err != nil {
		return 0, err
	}
	if code, ok := res.(int64); ok {
		switch code {
		case -1:
			return 0, fmt.Errorf("chat %s: %w", chatID, ErrChatNotFound)
		case -2:
			return 0, fmt.Errorf("%s in chat %s: %w", sender, chatID, ErrNotMember)
		}
	}
	id, _, err := idAndTS(res)
	return id, err
}

func idAndTS(res any) (int64, string, error) {
	a, ok := res.([]any)
	if !ok || len(a) != 2 {
		return 0, "", fmt.Errorf("unexpected script reply %v", res)
	}
	id, _ := a[0].(int64)
	ts, _ := a[1].(string)
	return id, ts, nil
}

// Joined is the result of Join.
type Joined struct {
	Added  bool  // false when the user was already a member
	SeenID int64 // the user sees messages after this id
}

// Join adds user to the chat; they see only messages sent after joining.
// Joining again changes nothing. It fails with ErrChatNotFound, writing
// nothing, when the chat does not exist.
func (s *Store) Join(ctx context.Context, chatID, user string) (Joined, error) {
	if err := names.Chat(chatID); err != nil {
		return Joined{}, err
	}
	if err := names.User(user); err != nil {
		return Joined{}, err
	}
	keys := []string{s.chatKey(chatID), s.idsKey(chatID)}
	if !s.cluster {
		keys = append(keys, s.seenKey(user))
	} else if err := s.checkIndexes(ctx, []string{user}); err != nil {
		// Written after the script on a cluster: checked before it.
		return Joined{}, err
	}
	res, err := joinScript.Run(ctx, s.rdb, keys, user, chatID).Result()
	if err != nil {
		return Joined{}, err
	}
	if code, ok := res.(int64); ok && code == -1 {
		return Joined{}, fmt.Errorf("chat %s: %w", chatID, ErrChatNotFound)
	}
	a, ok := res.([]any)
	if !ok || len(a) != 2 {
		return Joined{}, fmt.Errorf("unexpected join reply %v", res)
	}
	added, _ := a[0].(int64)
	seenStr, _ := a[1].(string)
	seen, err := strconv.ParseInt(seenStr, 10, 64)
	if err != nil {
		return Joined{}, fmt.Errorf("chat %s: bad seen id %q", chatID, seenStr)
	}
	if s.cluster {
		// Only now that the member is in chat:{ID}: a failed join writes
		// nothing, and a fetch in between simply does not list the chat yet.
		err := s.rdb.ZAddArgs(ctx, s.seenKey(user), redis.ZAddArgs{GT: true,
			Members: []redis.Z{{Score: float64(seen), Member: chatID}}}).Err()
		if err != nil {
			return Joined{}, err
		}
	}
	return Joined{Added: added == 1, SeenID: seen}, nil
}

// Left is the result of Leave.
type Left struct {
	ChatDeleted bool // the user was the last member: the chat's keys are gone
	// StaleEntryRemoved: the user was not a member, but seen:{USER} still
	// listed the chat (a join racing a leave on a cluster); that entry,
	// the only thing written, is gone.
	StaleEntryRemoved bool
}

// Leave removes user from the chat. The last member leaving deletes
// chat:{ID}, msgs:{ID} and ids:{ID} (ids:chat: stays); otherwise the
// messages every remaining member has seen are deleted, a bounded chunk
// per call. It fails with ErrChatNotFound or ErrNotMember, writing
// nothing, unless seen:{USER} still listed the chat: then that stale
// entry is removed and Leave succeeds with StaleEntryRemoved.
func (s *Store) Leave(ctx context.Context, chatID, user string) (Left, error) {
	if err := names.Chat(chatID); err != nil {
		return Left{}, err
	}
	if err := names.User(user); err != nil {
		return Left{}, err
	}
	keys := []string{s.chatKey(chatID), s.msgsKey(chatID), s.idsKey(chatID)}
	var v any
	var removed int64
	if !s.cluster {
		var err error
		if v, err = leaveScript.Run(ctx, s.rdb, append(keys, s.seenKey(user)), user, chatID, s.chunk).Result(); err != nil {
			return Left{}, err
		}
	} else {
		// The script on the {ID} slot first, then, unless it failed, the
		// index entry (a failed leave writes nothing). A fetch in between
		// cannot re-add the entry (ZADD XX).
		if err := s.checkIndexes(ctx, []string{user}); err != nil {
			return Left{}, err
		}
		var err error
		if v, err = leaveScript.Run(ctx, s.rdb, keys, user, chatID, s.chunk).Result(); err != nil {
			return Left{}, err
		}
		if removed, err = s.rdb.ZRem(ctx, s.seenKey(user), chatID).Result(); err != nil {
			return Left{}, err
		}
	}
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return Left{}, fmt.Errorf("unexpected leave reply %v", v)
	}
	code, _ := a[0].(int64)
	n, _ := a[1].(int64)
	if code < 0 {
		if n == 1 || removed == 1 {
			return Left{StaleEntryRemoved: true}, nil
		}
		if code == -1 {
			return Left{}, fmt.Errorf("chat %s: %w", chatID, ErrChatNotFound)
		}
		return Left{}, fmt.Errorf("%s in chat %s: %w", user, chatID, ErrNotMember)
	}
	if n > 0 {
		s.trim(ctx, []string{chatID})
	}
	return Left{ChatDeleted: code == 1}, nil
}

// membersPage is how many members one call of the members script reads.
const membersPage = 500

// Members lists the chat's members, their seen ids and unread counts, in
// seen id order: one round trip per 500 members. It fails with
// ErrChatNotFound.
func (s *Store) Members(ctx context.Context, chatID string) ([]Member, error) {
	if err := names.Chat(chatID); err != nil {
		return nil, err
	}
	keys := []string{s.chatKey(chatID), s.msgsKey(chatID)}
	var out []Member
	// A page of members per call, so a chat with many members never
	// holds the server for long; pages are read in seen id order.
	for start := 0; ; start += membersPage {
		res, err := membersScript.Run(ctx, s.rdb, keys, start, membersPage).Result()
		if err != nil {
			return nil, fmt.Errorf("chat %s: %w", chatID, err)
		}
		if code, ok := res.(int64); ok && code == -1 {
			return nil, fmt.Errorf("chat %s: %w", chatID, ErrChatNotFound)
		}
		a, ok := res.([]any)
		if !ok || len(a)%3 != 0 {
			return nil, fmt.Errorf("unexpected members reply %v", res)
		}
		for i := 0; i < len(a); i += 3 {
			user, _ := a[i].(string)
			seen, err := scoreInt(a[i+1])
			if err != nil {
				return nil, fmt.Errorf("chat %s: %w", chatID, err)
			}
			unread, _ := a[i+2].(int64)
			out = append(out, Member{User: user, SeenID: seen, Unread: unread})
		}
		if len(a)/3 < membersPage {
			break
		}
	}
	return out, nil
}

// SkippedError is returned by History, with the messages, when some stored
// values are not messages.
type SkippedError struct {
	ChatID  string
	Skipped []Skipped
}

func (e *SkippedError) Error() string {
	msg := fmt.Sprintf("chat %s: %d stored value(s) are not messages", e.ChatID, len(e.Skipped))
	if len(e.Skipped) > 0 {
		msg += fmt.Sprintf(" (id %d: %s)", e.Skipped[0].ID, e.Skipped[0].Error)
	}
	return msg
}

// History returns the messages the chat still stores (those not yet seen
// by every member), oldest first, reading a bounded chunk per round trip.
// It fails with ErrChatNotFound. Stored values that are not messages are
// left out and listed in a *SkippedError, returned with the messages.
func (s *Store) History(ctx context.Context, chatID string) ([]Message, error) {
	if err := names.Chat(chatID); err != nil {
		return nil, err
	}
	var rows []row
	from := "-inf"
	for {
		var exists *redis.IntCmd
		var raw *redis.ZSliceCmd
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			if from == "-inf" {
				exists = p.Exists(ctx, s.chatKey(chatID))
			}
			raw = p.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{Key: s.msgsKey(chatID), Start: from, Stop: "+inf",
				ByScore: true, Count: int64(s.chunk)})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("chat %s: %w", chatID, err)
		}
		if exists != nil && exists.Val() == 0 {
			return nil, fmt.Errorf("chat %s: %w", chatID, ErrChatNotFound)
		}
		zs := raw.Val()
		for _, z := range zs {
			score := strconv.FormatFloat(z.Score, 'f', -1, 64)
			m, _ := z.Member.(string)
			rows = append(rows, row{score: score, id: z.Score, raw: m})
		}
		if len(zs) < s.chunk {
			break
		}
		from = "(" + rows[len(rows)-1].score
	}
	c := decodeRows(chatID, rows)
	if len(c.Skipped) > 0 {
		return c.Messages, &SkippedError{ChatID: chatID, Skipped: c.Skipped}
	}
	return c.Messages, nil
}

// lessChatID orders chat ids numerically when both are numbers, else as
// strings, numbers first.
func lessChatID(a, b string) bool {
	na, ea := strconv.ParseUint(a, 10, 64)
	nb, eb := strconv.ParseUint(b, 10, 64)
	switch {
	case ea == nil && eb == nil:
		return na < nb
	case ea == nil:
		return true
	case eb == nil:
		return false
	}
	return a < b
}
