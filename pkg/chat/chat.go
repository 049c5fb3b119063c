package chat

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/chatq-dev/chatq/internal/base/names"
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
	// ErrMessageTooLong is returned, before any Redis call, for a message
	// over MaxMessageBytes.
	ErrMessageTooLong = errors.New("message too long")
	// ErrInvalid is matched (errors.Is) by the errors for an invalid chat
	// id, user name (see Names) or listing pattern, returned before any
	// Redis call. It is the same value as delayq.ErrInvalid and
	// shardlist.ErrInvalid.
	ErrInvalid = errInvalid
)

// errInvalid is the ErrInvalid every package of chatq shares.
var errInvalid = names.ErrInvalid

var (
	//go:embed create.lua
	createLua    string
	createScript = tokenScript(createLua)
	//go:embed send.lua
	sendLua    string
	sendScript = tokenScript(sendLua)
	//go:embed newid.lua
	newIDLua    string
	newIDScript = tokenScript(newIDLua)
	//go:embed join.lua
	joinLua    string
	joinScript = tokenScript(joinLua)
	//go:embed leave.lua
	leaveLua    string
	leaveScript = script(leaveLua)
	//go:embed fetch.lua
	fetchLua    string
	fetchScript = luascript.New(fetchLua)
	//go:embed mark.lua
	markLua    string
	markScript = markScriptOf(markLua)
	//go:embed lib.lua
	libLua string
	//go:embed marks.lua
	marksLua    string
	marksScript = markScriptOf(marksLua)
	//go:embed trim.lua
	trimLua    string
	trimScript = script(trimLua)
	//go:embed members.lua
	membersLua    string
	membersScript = luascript.New(membersLua)
)

// script is a script that writes: luascript.Permitted (allowed, which
// checks the user's permissions before the first write), then body.
func script(body string) *luascript.Script {
	return luascript.New(luascript.Permitted, body)
}

// markScriptOf is mark.lua or marks.lua: script's preludes, then lib.lua
// (mark(), which both run), then body.
func markScriptOf(body string) *luascript.Script {
	return luascript.New(luascript.Permitted, libLua, body)
}

// tokenScript is script for a script that takes a token: it also
// opens with the records' functions (luascript.Record).
func tokenScript(body string) *luascript.Script {
	return luascript.New(luascript.Permitted, luascript.Record, body)
}

// defaultChunkSize is the default of Options.ChunkSize.
const defaultChunkSize = 500

// Options configure a Client; the zero value takes the defaults.
type Options struct {
	// Prefix is put in front of every key and of the notification channel.
	Prefix string
	// Cluster keeps every script on one slot, updating seen:{USER}
	// separately. New sets it for a *redis.ClusterClient.
	Cluster bool
	// ChunkSize is the most messages one server call reads or deletes
	// (500 when 0), so that no call blocks the server for
	// long whatever the size of a chat: bigger reads and deletions take
	// several calls.
	ChunkSize int
}

// Client runs chat operations on a Redis server. It is safe for
// concurrent use.
type Client struct {
	rdb     redis.UniversalClient
	prefix  string
	cluster bool
	chunk   int
	// now is the client's clock, which names the minute of a call's
	// records (sentKeys, idRecordKeys); nil for time.Now (tests set it).
	now func() time.Time
}

// New returns a Client that uses rdb, and makes no Redis call.
func New(rdb redis.UniversalClient, opt Options) *Client {
	_, isCluster := rdb.(*redis.ClusterClient)
	chunk := opt.ChunkSize
	if chunk <= 0 {
		chunk = defaultChunkSize
	}
	return &Client{rdb: rdb, prefix: opt.Prefix, cluster: opt.Cluster || isCluster, chunk: chunk}
}

func (s *Client) chatKey(id string) string   { return s.prefix + "chat:{" + id + "}" }
func (s *Client) msgsKey(id string) string   { return s.prefix + "msgs:{" + id + "}" }
func (s *Client) idsKey(id string) string    { return s.prefix + "ids:{" + id + "}" }
func (s *Client) seenKey(user string) string { return s.prefix + "seen:{" + user + "}" }
func (s *Client) chatIDsKey() string         { return s.prefix + "ids:chat:" }

// channel is the Pub/Sub channel every sent message is announced on (the
// payload is the chat id), which Watch listens to.
func (s *Client) channel() string { return s.prefix + "chat:sent" }

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
	// Message, when not nil, is sent by From as message 1, in the same
	// atomic step; nil sends none (an empty string is a message).
	Message *string
	// Token, when set, makes the create safe to repeat, as
	// SendOptions.Token does a send: its answer is recorded in the chat's
	// slot (field <token> of sent:{ID}:<minute>) for 10 minutes or a
	// little more, and an automatic id is
	// taken once per token (recorded beside ids:chat:, in its slot). A
	// Create with a token already recorded returns the first chat and
	// makes (and sends) nothing, so a caller whose reply was lost sends
	// the same request again with the same token.
	Token string
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
func (s *Client) Create(ctx context.Context, req CreateRequest) (*Created, error) {
	if err := names.User(req.From); err != nil {
		return nil, err
	}
	members := []string{req.From}
	dup := map[string]bool{req.From: true}
	for _, u := range req.To {
		if err := names.User(u); err != nil {
			return nil, err
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
			return nil, err
		}
	}
	if req.ID != "" {
		if err := names.Chat(req.ID); err != nil {
			return nil, err
		}
	}
	if err := checkToken(req.Token); err != nil {
		return nil, err
	}
	// The script checks the members' seen:{USER} itself, but on a cluster
	// they are written after it, and an automatic id is taken before it:
	// check them first, so that a bad one fails the create with nothing
	// written.
	if s.cluster || req.ID == "" {
		if err := s.checkIndexes(ctx, members); err != nil {
			return nil, err
		}
	}
	if req.ID != "" {
		return s.create(ctx, req.ID, members, tail, req.Token)
	}
	// An automatic id can collide with a chat created with an explicit
	// id; take the next one then. With a token each try's id is recorded,
	// so that a repeat makes the same tries, with the same ids.
	for try := 1; try <= 100; try++ {
		var n int64
		var err error
		if req.Token == "" {
			n, err = s.rdb.Incr(ctx, s.chatIDsKey()).Result()
		} else {
			n, err = newIDScript.Run(ctx, s.rdb, append([]string{s.chatIDsKey()}, s.idRecordKeys()...),
				tokenLifetime.Milliseconds(), luascript.RecordField(req.Token, try)).Int64()
		}
		if err != nil {
			return nil, err
		}
		c, err := s.create(ctx, strconv.FormatInt(n, 10), members, tail, req.Token)
		if !errors.Is(err, ErrChatExists) {
			return c, err
		}
	}
	return nil, fmt.Errorf("no free chat id after 100 tries of %s", s.chatIDsKey())
}

// checkIndexes fails when a member's seen:{USER} is not a sorted set.
func (s *Client) checkIndexes(ctx context.Context, members []string) error {
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

// create runs the create script for chat id, with the record of a create
// with token when token is not "".
func (s *Client) create(ctx context.Context, id string, members []string, tail, token string) (*Created, error) {
	keys := []string{s.chatKey(id), s.msgsKey(id), s.idsKey(id)}
	life := ""
	if token != "" {
		keys = append(keys, s.sentKeys(id)...)
		life = strconv.FormatInt(tokenLifetime.Milliseconds(), 10)
	}
	if !s.cluster {
		for _, u := range members {
			keys = append(keys, s.seenKey(u))
		}
	}
	args := []any{id, s.channel(), tail, life, token}
	for _, u := range members {
		args = append(args, u)
	}
	res, err := createScript.Run(ctx, s.rdb, keys, args...).Result()
	if err != nil {
		return nil, err
	}
	if code, ok := res.(int64); ok && code == -1 {
		return nil, fmt.Errorf("chat %s: %w", id, ErrChatExists)
	}
	mid, _, err := idAndTS(res)
	if err != nil {
		return nil, err
	}
	if s.cluster {
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, u := range members {
				p.ZAddArgs(ctx, s.seenKey(u), redis.ZAddArgs{GT: true, Members: []redis.Z{{Score: 0, Member: id}}})
			}
			return nil
		})
		if err != nil {
			return &Created{ChatID: id, MessageID: mid}, err
		}
	}
	return &Created{ChatID: id, MessageID: mid}, nil
}

// Send appends message to the chat as sender and returns its id. It fails
// with ErrChatNotFound or ErrNotMember, writing nothing.
func (s *Client) Send(ctx context.Context, chatID, sender, message string) (int64, error) {
	return s.SendWith(ctx, chatID, sender, message, SendOptions{})
}

// SendOptions control SendWith.
type SendOptions struct {
	// Token, when set, makes the send safe to repeat: a client-chosen
	// random string of 16 to 64 characters of A-Z a-z 0-9 _ - (as
	// crypto/rand.Text returns) recorded with the message's id, in the
	// chat's slot (field <token> of the hash of its minute of the
	// client's clock, sent:{ID}:<minute>), for 10 minutes or a little
	// more. A send with a
	// token already recorded returns the first id and stores (and
	// announces) nothing, so a caller whose reply was lost sends the same
	// call again with the same token.
	Token string
	// FirstTry, with Token, says that the token was never sent before
	// (it was made for this call), so that nothing can be recorded under
	// it: the send then looks nothing up, and is sent once (go-redis does
	// not send it again after a lost reply, whatever its MaxRetries),
	// which saves the server about half of what the token costs
	// (docs/reliability.md). Leave it false on a repeat: a repeat marked
	// FirstTry is applied again.
	FirstTry bool
}

// tokenLifetime is how long the record of a send with a token lasts: long
// enough to cover a command's --timeout, a server restart and the repeats
// in between, short enough that records stay few (about 105 bytes of
// server memory each; see docs/reliability.md). A record's hash lives this
// long from its first write (record.lua), so a record at least 10 minutes.
const tokenLifetime = luascript.RecordLifetime

// sentKeys returns the keys of the records of a create or a join with a
// token to chat id made now, in the chat's slot: the HASHes
// sent:{ID}:<minute> of this minute of the client's clock and the 10
// before it (luascript.RecordKeys), whose field is the token. A send
// passes them, or on a first try this minute's alone
// (luascript.Script.RunRecorded). A minute has 8 digits, a token 16 to 64
// characters: no record key of the one-key-per-record shape
// (sent:{ID}:<token>, before) is one of these.
func (s *Client) sentKeys(id string) []string {
	return luascript.RecordKeys(s.sentBase(id), s.clock(), false)
}

// sentBase is what the record keys of chat id put before the minute.
func (s *Client) sentBase(id string) string { return s.prefix + "sent:{" + id + "}:" }

// idRecordKeys returns the keys of the records of the ids creates with a
// token took (newid.lua takes the id and records it, so they are in the
// slot of ids:chat:): the HASHes <prefix>{<prefix>ids:chat:}:T:<minute> of
// this minute and the 10 before it, whose hash tag is ids:chat:'s whole
// name; the field is the token, ".<try>" after the first try. A prefix
// with braces of its own keeps its hash tag (<prefix>ids:chat::T:<minute>);
// braces that make no tag put the records elsewhere on a cluster, where a
// create with a token then fails (CROSSSLOT), writing nothing.
func (s *Client) idRecordKeys() []string {
	return luascript.RecordKeys(s.idRecordBase(), s.clock(), false)
}

// clock is the client's clock: time.Now unless a test set another.
func (s *Client) clock() time.Time {
	if s.now != nil {
		return s.now()
	}
	return time.Now()
}

// idRecordBase is what idRecordKeys puts before the minute.
func (s *Client) idRecordBase() string {
	if strings.ContainsAny(s.prefix, "{}") {
		return s.chatIDsKey() + ":T:"
	}
	return s.prefix + "{" + s.chatIDsKey() + "}:T:"
}

// checkToken checks a token given in options ("" is none).
func checkToken(token string) error {
	if token != "" && !names.IsToken(token) {
		return fmt.Errorf("token %q: want 16 to 64 characters of A-Z a-z 0-9 _ -: %w", token, ErrInvalid)
	}
	return nil
}

// SendWith is Send with options: with a token, a repeat of the same call
// returns the first call's id and stores nothing.
func (s *Client) SendWith(ctx context.Context, chatID, sender, message string, opt SendOptions) (int64, error) {
	if err := names.Chat(chatID); err != nil {
		return 0, err
	}
	if err := names.User(sender); err != nil {
		return 0, err
	}
	if err := checkToken(opt.Token); err != nil {
		return 0, err
	}
	tail, err := messageTail(sender, message)
	if err != nil {
		return 0, err
	}
	keys := []string{s.chatKey(chatID), s.msgsKey(chatID), s.idsKey(chatID)}
	args := []any{sender, tail, s.channel(), chatID}
	var res any
	if opt.Token != "" {
		args = append(args, tokenLifetime.Milliseconds(), opt.Token)
		res, err = sendScript.RunRecorded(ctx, s.rdb, keys, s.sentBase(chatID), s.clock(), opt.FirstTry, args...).Result()
	} else {
		res, err = sendScript.Run(ctx, s.rdb, keys, args...).Result()
	}
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
func (s *Client) Join(ctx context.Context, chatID, user string) (*Joined, error) {
	return s.JoinWith(ctx, chatID, user, JoinOptions{})
}

// JoinOptions control JoinWith.
type JoinOptions struct {
	// Token, when set, makes the join's answer safe to repeat, as
	// SendOptions.Token does a send's: it is recorded in the chat's slot
	// (sent:{ID}:<minute>) for 10 minutes or a little more, and a join
	// with the same token
	// returns it (Added as the first join said) and writes nothing.
	Token string
}

// JoinWith is Join with options: with a token, a repeat of the same call
// returns the first call's answer and writes nothing.
func (s *Client) JoinWith(ctx context.Context, chatID, user string, opt JoinOptions) (*Joined, error) {
	if err := names.Chat(chatID); err != nil {
		return nil, err
	}
	if err := names.User(user); err != nil {
		return nil, err
	}
	if err := checkToken(opt.Token); err != nil {
		return nil, err
	}
	keys := []string{s.chatKey(chatID), s.idsKey(chatID)}
	if !s.cluster {
		keys = append(keys, s.seenKey(user))
	} else if err := s.checkIndexes(ctx, []string{user}); err != nil {
		// Written after the script on a cluster: checked before it.
		return nil, err
	}
	args := []any{user, chatID}
	if opt.Token != "" {
		keys = append(keys, s.sentKeys(chatID)...)
		args = append(args, tokenLifetime.Milliseconds(), opt.Token)
	}
	res, err := joinScript.Run(ctx, s.rdb, keys, args...).Result()
	if err != nil {
		return nil, err
	}
	if code, ok := res.(int64); ok && code == -1 {
		return nil, fmt.Errorf("chat %s: %w", chatID, ErrChatNotFound)
	}
	a, ok := res.([]any)
	if !ok || len(a) != 2 {
		return nil, fmt.Errorf("unexpected join reply %v", res)
	}
	added, _ := a[0].(int64)
	seenStr, _ := a[1].(string)
	seen, err := strconv.ParseInt(seenStr, 10, 64)
	if err != nil {
		return nil, fmt.Errorf("chat %s: bad seen id %q", chatID, seenStr)
	}
	if s.cluster {
		// Only now that the member is in chat:{ID}: a failed join writes
		// nothing, and a fetch in between simply does not list the chat yet.
		err := s.rdb.ZAddArgs(ctx, s.seenKey(user), redis.ZAddArgs{GT: true,
			Members: []redis.Z{{Score: float64(seen), Member: chatID}}}).Err()
		if err != nil {
			return nil, err
		}
	}
	return &Joined{Added: added == 1, SeenID: seen}, nil
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
func (s *Client) Leave(ctx context.Context, chatID, user string) (*Left, error) {
	if err := names.Chat(chatID); err != nil {
		return nil, err
	}
	if err := names.User(user); err != nil {
		return nil, err
	}
	keys := []string{s.chatKey(chatID), s.msgsKey(chatID), s.idsKey(chatID)}
	var v any
	var removed int64
	if !s.cluster {
		var err error
		if v, err = leaveScript.Run(ctx, s.rdb, append(keys, s.seenKey(user)), user, chatID, s.chunk).Result(); err != nil {
			return nil, err
		}
	} else {
		// The script on the {ID} slot first, then, unless it failed, the
		// index entry (a failed leave writes nothing). A fetch in between
		// cannot re-add the entry (ZADD XX).
		if err := s.checkIndexes(ctx, []string{user}); err != nil {
			return nil, err
		}
		var err error
		if v, err = leaveScript.Run(ctx, s.rdb, keys, user, chatID, s.chunk).Result(); err != nil {
			return nil, err
		}
		if removed, err = s.rdb.ZRem(ctx, s.seenKey(user), chatID).Result(); err != nil {
			return nil, err
		}
	}
	a, ok := v.([]any)
	if !ok || len(a) != 2 {
		return nil, fmt.Errorf("unexpected leave reply %v", v)
	}
	code, _ := a[0].(int64)
	n, _ := a[1].(int64)
	if code < 0 {
		if n == 1 || removed == 1 {
			return &Left{StaleEntryRemoved: true}, nil
		}
		if code == -1 {
			return nil, fmt.Errorf("chat %s: %w", chatID, ErrChatNotFound)
		}
		return nil, fmt.Errorf("%s in chat %s: %w", user, chatID, ErrNotMember)
	}
	if n > 0 {
		s.trim(ctx, []string{chatID})
	}
	return &Left{ChatDeleted: code == 1}, nil
}

// membersPage is how many members one call of the members script reads.
const membersPage = 500

// Members lists the chat's members, their seen ids and unread counts, in
// seen id order: one round trip per 500 members. It fails with
// ErrChatNotFound.
func (s *Client) Members(ctx context.Context, chatID string) ([]Member, error) {
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

// HistoryOptions choose what History returns: every stored message, or
// those that match all the filters given.
type HistoryOptions struct {
	// Grep, if set, keeps only messages whose text contains it.
	Grep string
	// Regexp, if set, keeps only messages whose text it matches.
	Regexp *regexp.Regexp
	// Progress, if set, is called after each round trip with the messages
	// examined so far and how many of them were kept.
	Progress func(examined, kept int)
}

// keeps reports whether m passes o's filters.
func (o *HistoryOptions) keeps(m *Message) bool {
	return strings.Contains(m.Message, o.Grep) && (o.Regexp == nil || o.Regexp.MatchString(m.Message))
}

// History returns the messages the chat still stores (those not yet seen
// by every member), oldest first, reading a bounded chunk per round trip,
// or only those that match opt's filters (matched here, chunk by chunk, on
// the decoded text: a stored message is JSON, whose escapes a match on the
// server would see). It fails with ErrChatNotFound. Stored values that are
// not messages are left out and listed in a *SkippedError, returned with
// the messages.
func (s *Client) History(ctx context.Context, chatID string, opt HistoryOptions) ([]Message, error) {
	if err := names.Chat(chatID); err != nil {
		return nil, err
	}
	var out []Message
	var skipped []Skipped
	examined := 0
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
		rows := make([]row, 0, len(zs))
		for _, z := range zs {
			score := strconv.FormatFloat(z.Score, 'f', -1, 64)
			m, _ := z.Member.(string)
			rows = append(rows, row{score: score, id: z.Score, raw: m})
		}
		c := decodeRows(chatID, rows)
		for _, m := range c.Messages {
			if opt.keeps(&m) {
				out = append(out, m)
			}
		}
		skipped = append(skipped, c.Skipped...)
		examined += len(rows)
		if opt.Progress != nil {
			opt.Progress(examined, len(out))
		}
		if len(zs) < s.chunk {
			break
		}
		from = "(" + rows[len(rows)-1].score
	}
	if out == nil {
		out = []Message{}
	}
	if len(skipped) > 0 {
		return out, &SkippedError{ChatID: chatID, Skipped: skipped}
	}
	return out, nil
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
