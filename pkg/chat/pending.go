package chat

import (
	"context"
	"fmt"
	"sort"
	"strconv"

	"github.com/chatq-dev/chatq/internal/names"
	"github.com/redis/go-redis/v9"
)

// PendingOptions change what Pending reads.
type PendingOptions struct {
	// Chat restricts Pending to one chat; the user must be a member.
	Chat string
	// Peek reads without marking anything seen or deleting anything.
	Peek bool
	// After skips, per chat id, the messages up to that id even if unseen
	// (Watch uses it to follow without marking).
	After map[string]int64
}

// Pending returns the messages user has not seen, per chat (in chat id
// order), oldest first; chats with nothing new are left out. Unless
// opts.Peek, it marks them seen and deletes the messages every member of
// the chat has now seen. A user in K chats costs 2 round trips whatever K
// (3 when marking on a cluster), one fewer with opts.Chat.
func (s *Store) Pending(ctx context.Context, user string, opts PendingOptions) ([]ChatMessages, error) {
	if err := names.User(user); err != nil {
		return nil, err
	}
	var chats []string
	if opts.Chat != "" {
		if err := names.Chat(opts.Chat); err != nil {
			return nil, err
		}
		chats = []string{opts.Chat}
	} else {
		var err error
		if chats, err = s.rdb.ZRange(ctx, s.seenKey(user), 0, -1).Result(); err != nil {
			return nil, err
		}
		sort.Slice(chats, func(i, j int) bool { return lessChatID(chats[i], chats[j]) })
	}
	mode := "mark"
	if opts.Peek {
		mode = "peek"
	}
	replies, err := s.fetch(ctx, user, chats, mode, opts.After)
	if err != nil {
		return nil, err
	}
	var out []ChatMessages
	var seen []redis.Z
	for i, r := range replies {
		if err := r.err(chats[i], user); err != nil {
			if opts.Chat != "" {
				return nil, err
			}
			continue // a stale seen:{USER} entry: not a member
		}
		if len(r.raw) == 0 {
			continue
		}
		msgs, err := decodeAll(chats[i], r.raw)
		if err != nil {
			return nil, err
		}
		out = append(out, ChatMessages{ChatID: chats[i], Messages: msgs})
		seen = append(seen, redis.Z{Score: float64(r.last), Member: chats[i]})
	}
	// On a standalone server the fetch script has moved seen:{USER} along
	// with chat:{ID}; on a cluster it lives in another slot.
	if !opts.Peek && s.cluster && len(seen) > 0 {
		// The index follows chat:{ID}: XX never re-adds a chat the user
		// left meanwhile, GT never moves an entry back.
		err := s.rdb.ZAddArgs(ctx, s.seenKey(user), redis.ZAddArgs{XX: true, GT: true, Members: seen}).Err()
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// ChatInfo is one of a user's chats.
type ChatInfo struct {
	ChatID string `json:"chat_id"`
	SeenID int64  `json:"seen_id"`
	Unread int64  `json:"unread"`
}

// Chats lists the chats user is a member of, in chat id order, with the
// number of messages they have not seen. 2 round trips whatever the number
// of chats.
func (s *Store) Chats(ctx context.Context, user string) ([]ChatInfo, error) {
	if err := names.User(user); err != nil {
		return nil, err
	}
	chats, err := s.rdb.ZRange(ctx, s.seenKey(user), 0, -1).Result()
	if err != nil {
		return nil, err
	}
	sort.Slice(chats, func(i, j int) bool { return lessChatID(chats[i], chats[j]) })
	replies, err := s.fetch(ctx, user, chats, "count", nil)
	if err != nil {
		return nil, err
	}
	out := []ChatInfo{}
	for i, r := range replies {
		if r.code == 0 {
			out = append(out, ChatInfo{ChatID: chats[i], SeenID: r.seen, Unread: r.count})
		}
	}
	return out, nil
}

// fetched is one chat's fetch script reply.
type fetched struct {
	code  int64 // 0, or the script's -1 (no such chat) or -2 (not a member)
	seen  int64
	last  int64 // id of the last message in raw
	count int64
	raw   []string
}

// err is the error for a chat the user could not read, or nil.
func (f *fetched) err(chatID, user string) error {
	switch f.code {
	case -1:
		return fmt.Errorf("chat %s: %w", chatID, ErrChatNotFound)
	case -2:
		return fmt.Errorf("%s in chat %s: %w", user, chatID, ErrNotMember)
	}
	return nil
}

// fetch runs the fetch script for every chat in one pipeline. In mark mode
// on a standalone server each call also moves the chat's seen:{USER} entry.
func (s *Store) fetch(ctx context.Context, user string, chats []string, mode string, after map[string]int64) ([]*fetched, error) {
	if len(chats) == 0 {
		return nil, nil
	}
	index := mode == "mark" && !s.cluster
	run := func() ([]*redis.Cmd, error) {
		cmds := make([]*redis.Cmd, len(chats))
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, id := range chats {
				keys := []string{s.chatKey(id), s.msgsKey(id), s.idsKey(id)}
				args := []any{user, mode, strconv.FormatInt(after[id], 10)}
				if index {
					keys = append(keys, s.seenKey(user))
					args = append(args, id)
				}
				cmds[i] = fetchScript.EvalSha(ctx, p, keys, args...)
			}
			return nil
		})
		return cmds, err
	}
	cmds, err := run()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		// Nothing ran: every command of the pipeline is the same script.
		if err := fetchScript.Load(ctx, s.rdb).Err(); err != nil {
			return nil, err
		}
		cmds, err = run()
	}
	if err != nil {
		return nil, err
	}
	out := make([]*fetched, len(chats))
	for i, c := range cmds {
		res, err := c.Result()
		if err != nil {
			return nil, err
		}
		f, err := parseFetched(res, mode)
		if err != nil {
			return nil, fmt.Errorf("chat %s: %w", chats[i], err)
		}
		out[i] = f
	}
	return out, nil
}

func parseFetched(res any, mode string) (*fetched, error) {
	if code, ok := res.(int64); ok && (code == -1 || code == -2) {
		return &fetched{code: code}, nil
	}
	a, ok := res.([]any)
	if !ok || len(a) < 2 {
		return nil, fmt.Errorf("unexpected fetch reply %v", res)
	}
	f := &fetched{}
	var err error
	if f.seen, err = scoreInt(a[0]); err != nil {
		return nil, err
	}
	if mode == "count" {
		f.count, _ = a[1].(int64)
		return f, nil
	}
	if len(a) > 2 {
		if f.last, err = scoreInt(a[1]); err != nil {
			return nil, err
		}
	}
	for _, m := range a[2:] {
		str, _ := m.(string)
		f.raw = append(f.raw, str)
	}
	return f, nil
}

// scoreInt parses a ZSET score that holds an id. Scores come back as
// strings such as "1000001"; ParseFloat also reads "1e+06" should a server
// format them so.
func scoreInt(v any) (int64, error) {
	str, _ := v.(string)
	f, err := strconv.ParseFloat(str, 64)
	if err != nil {
		return 0, fmt.Errorf("bad score %q", str)
	}
	return int64(f), nil
}
