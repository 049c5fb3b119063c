package chat

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/redis/go-redis/v9"
)

// Chats returns a page of the ids of the chats under the prefix that match
// the glob match ("" for all), go-redis SCAN style: start with cursor 0 and
// call again with the cursor returned until it is 0. Each call is one SCAN
// … COUNT count (on a cluster, of one master at a time), so a page may be
// empty before the end; as with SCAN, a chat may be returned twice. match
// may not hold '{' or '}' (ErrInvalid).
func (s *Client) Chats(ctx context.Context, cursor uint64, match string, count int64) ([]string, uint64, error) {
	return s.scanNames(ctx, cursor, "chat:{", match, count, names.Chat)
}

// Users returns a page of the names of the users who are in a chat (who
// have an index of their chats), as Chats does for chats.
func (s *Client) Users(ctx context.Context, cursor uint64, match string, count int64) ([]string, uint64, error) {
	return s.scanNames(ctx, cursor, "seen:{", match, count, names.User)
}

// scanNames runs one SCAN for the keys head{NAME} and returns the names
// that check accepts.
func (s *Client) scanNames(ctx context.Context, cursor uint64, head, match string, count int64, check func(string) error) ([]string, uint64, error) {
	if strings.ContainsAny(match, "{}") {
		return nil, 0, fmt.Errorf("invalid pattern %q: no '{' or '}': %w", match, ErrInvalid)
	}
	if match == "" {
		match = "*"
	}
	keys, next, err := keyspace.ScanPage(ctx, s.rdb, cursor, keyspace.Quote(s.prefix)+head+match+"}", count)
	if err != nil {
		return nil, 0, err
	}
	found := keyspace.Names(keys, s.prefix, head, func(tail string) bool { return tail == "" },
		func(name string) bool { return check(name) == nil })
	return found, next, nil
}

// Stats is how many messages a chat stores and the id of its last message.
type Stats struct {
	ChatID   string `json:"chat_id"`
	Messages int64  `json:"messages"` // stored: not yet seen by every member
	LastID   int64  `json:"last_id"`  // 0 before the first message
	// Error says why the chat could not be read (a key of the wrong
	// type); the others are read.
	Error string `json:"error,omitempty"`
}

// Stats reads the numbers of the chats, in their order, in one round trip
// (a pipeline of ZCARD msgs:{ID} and GET ids:{ID} per chat). A chat that
// does not exist has zeros.
func (s *Client) Stats(ctx context.Context, chatIDs ...string) ([]Stats, error) {
	for _, id := range chatIDs {
		if err := names.Chat(id); err != nil {
			return nil, err
		}
	}
	if len(chatIDs) == 0 {
		return []Stats{}, nil
	}
	cards := make([]*redis.IntCmd, len(chatIDs))
	lasts := make([]*redis.StringCmd, len(chatIDs))
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range chatIDs {
			cards[i] = p.ZCard(ctx, s.msgsKey(id))
			lasts[i] = p.Get(ctx, s.idsKey(id))
		}
		return nil
	})
	if err != nil && !isReplyError(cmds) {
		return nil, err
	}
	out := make([]Stats, len(chatIDs))
	for i, id := range chatIDs {
		out[i] = Stats{ChatID: id, Messages: cards[i].Val()}
		last, err := lasts[i].Result()
		if err == redis.Nil {
			err = nil
		}
		if err == nil && last != "" {
			out[i].LastID, err = strconv.ParseInt(last, 10, 64)
		}
		if err == nil {
			err = cards[i].Err()
		}
		if err != nil {
			out[i].Error = fmt.Sprintf("chat %s: %v", id, err)
		}
	}
	return out, nil
}
