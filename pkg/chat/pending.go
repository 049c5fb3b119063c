package chat

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/redis/go-redis/v9"
)

// PendingOptions change what Pending reads.
type PendingOptions struct {
	// Chat restricts Pending to one chat; the user must be a member.
	Chat string
	// Peek reads without marking anything seen or deleting anything. A
	// caller that marks after delivering (MarkSeen) peeks first.
	Peek bool
	// After skips, per chat id, the messages up to that id even if unseen
	// (Watch uses it to follow without marking).
	After map[string]int64
}

// Skipped is a value stored in msgs:{ID} that is not a chat message. It is
// handed to the reader in place of the message (its id is its score), so
// marking passes over it like any message: each member is told once, and
// it is deleted with the messages every member has seen.
type Skipped struct {
	ID    int64  `json:"id"`
	Raw   string `json:"raw"`
	Error string `json:"error"`
}

// ChatMessages are the messages of one chat, oldest first.
type ChatMessages struct {
	ChatID   string    `json:"chat_id"`
	Messages []Message `json:"messages"`
	// Skipped are the stored values among them that are not messages.
	Skipped []Skipped `json:"skipped,omitempty"`
	// Error says why the chat could not be read (a key of the wrong type,
	// say); it then has no messages and nothing of it was marked. The
	// other chats are read and marked as usual.
	Error string `json:"error,omitempty"`

	err  error
	last string // the score of the last value handed: what MarkSeen marks
	from int64  // the user's seen id when it was read
}

// Err is the error behind Error, for errors.Is, or nil.
func (c ChatMessages) Err() error { return c.err }

// upto is the score up to which MarkSeen marks c: that of the last value
// handed, message or skipped ("" for none).
func (c ChatMessages) upto() string {
	if c.last != "" {
		return c.last
	}
	var last int64
	if n := len(c.Messages); n > 0 {
		last = c.Messages[n-1].ID
	}
	if n := len(c.Skipped); n > 0 && c.Skipped[n-1].ID > last {
		last = c.Skipped[n-1].ID
	}
	if last == 0 {
		return ""
	}
	return strconv.FormatInt(last, 10)
}

// prefilterMin is the number of chats from which Pending first reads every
// chat's last message id (one MGET) to fetch only the chats with news.
// Below it, fetching all of them costs the server about as much and saves
// a round trip.
var prefilterMin = 8

// Pending returns the messages user has not seen, per chat (in chat id
// order), oldest first; chats with nothing new are left out. Unless
// opts.Peek, it then marks them seen (MarkSeen) and deletes the messages
// every member of the chat has now seen.
//
// A chat that cannot be read is returned with Error set and nothing else
// of it is marked; the others are read and marked as usual. A stored value
// that is not a message is returned in Skipped. With opts.Chat a chat that
// does not exist or a user who is not a member is an error.
//
// When marking fails (a lost reply, say), Pending returns the messages
// together with the error: the caller has them, and they may be delivered
// again (at-least-once). Nothing is ever marked that Pending does not
// return. A caller that must not lose messages it could not process (a
// crash after Pending returned) peeks, processes, then calls MarkSeen.
func (s *Client) Pending(ctx context.Context, user string, opts PendingOptions) ([]ChatMessages, error) {
	out, err := s.read(ctx, user, opts)
	if err != nil || opts.Peek {
		return out, err
	}
	return out, s.MarkSeen(ctx, user, out)
}

func (s *Client) read(ctx context.Context, user string, opts PendingOptions) ([]ChatMessages, error) {
	if err := names.User(user); err != nil {
		return nil, err
	}
	var chats []string
	var got []*fetched
	if opts.Chat != "" {
		if err := names.Chat(opts.Chat); err != nil {
			return nil, err
		}
		chats = []string{opts.Chat}
		var err error
		if got, err = s.fetchAll(ctx, user, chats, opts.After); err != nil {
			return nil, err
		}
	} else {
		zs, err := s.index(ctx, user)
		if err != nil {
			return nil, err
		}
		if len(zs) < prefilterMin {
			// Few chats: a fetch script each, no prefilter.
			for _, z := range zs {
				chats = append(chats, z.Member.(string))
			}
			if got, err = s.fetchAll(ctx, user, chats, opts.After); err != nil {
				return nil, err
			}
		} else {
			news, err := s.withNews(ctx, zs, opts.After)
			if err != nil {
				return nil, err
			}
			if chats, got, err = s.readNews(ctx, user, news, opts.After); err != nil {
				return nil, err
			}
		}
	}
	var out []ChatMessages
	for i, f := range got {
		if err := f.err(chats[i], user); err != nil {
			if opts.Chat != "" {
				return nil, err
			}
			if f.code == -1 || f.code == -2 {
				continue // a stale seen:{USER} entry: not a member
			}
			out = append(out, ChatMessages{ChatID: chats[i], Messages: []Message{}, Error: err.Error(), err: err})
			continue
		}
		if len(f.rows) == 0 {
			continue
		}
		c := decodeRows(chats[i], f.rows)
		c.from = f.seen
		out = append(out, c)
	}
	return out, nil
}

// indexPage is the most entries of seen:{USER} one call reads.
var indexPage = 1000

// index returns the entries of seen:{USER} (chat id -> seen id), in chat
// id order. A user in at most indexPage chats takes one ZRANGE, as
// before; above, the index is read on by score, indexPage entries per
// call, so no call walks a big index. Seen ids only grow, so an entry
// present during the whole read is met: after the last score read, or
// read already. The entries at the last score read are read again on the
// next page (duplicates are dropped, the lower seen id kept), unless there
// are half a page of them: then they are skipped by offset, and an entry
// at that very score that moves or leaves meanwhile can hide one other
// there until the next call.
func (s *Client) index(ctx context.Context, user string) ([]redis.Z, error) {
	key := s.seenKey(user)
	// One entry more than a page, so that a user in exactly indexPage
	// chats is read in one call too.
	zs, err := s.rdb.ZRangeWithScores(ctx, key, 0, int64(indexPage)).Result()
	if err != nil {
		return nil, err
	}
	if len(zs) > indexPage {
		at := make(map[string]int, 2*indexPage) // member -> index in zs
		for i, z := range zs {
			at[z.Member.(string)] = i
		}
		page := zs[:indexPage]
		var offset int64
		from := math.Inf(-1) // the score the last page was read from
		for len(page) == indexPage {
			last := page[len(page)-1].Score
			tie := 0 // entries read at score last
			for i := len(page) - 1; i >= 0 && page[i].Score == last; i-- {
				tie++
			}
			if tie == len(page) && last == from {
				tie += int(offset) // and those the offset skipped
			}
			from = last
			offset = 0
			if tie >= indexPage/2 {
				offset = int64(tie)
			}
			page, err = s.rdb.ZRangeArgsWithScores(ctx, redis.ZRangeArgs{
				Key: key, ByScore: true, Start: strconv.FormatFloat(last, 'f', -1, 64), Stop: "+inf",
				Offset: offset, Count: int64(indexPage),
			}).Result()
			if err != nil {
				return nil, err
			}
			for _, z := range page {
				id := z.Member.(string)
				if i, ok := at[id]; ok {
					zs[i].Score = min(zs[i].Score, z.Score)
					continue
				}
				at[id] = len(zs)
				zs = append(zs, z)
			}
		}
	}
	sort.Slice(zs, func(i, j int) bool { return lessChatID(zs[i].Member.(string), zs[j].Member.(string)) })
	return zs, nil
}

// news is a chat the prefilter keeps, with what the index and the chat's
// counter said.
type news struct {
	id     string
	seen   int64 // in the index
	last   int64 // ids:{ID}
	lastOK bool  // ids:{ID} held a number
}

// withNews returns the chats of the index zs (in order) whose last message
// id differs from the user's seen id in the index, or from the after
// cursor when that is ahead: one MGET per 1000 chats, in one round trip.
// A chat whose counter went back (deleted and created again) or cannot be
// read is kept: its read sorts it out.
func (s *Client) withNews(ctx context.Context, zs []redis.Z, after map[string]int64) ([]news, error) {
	keys := make([]string, len(zs))
	for i, z := range zs {
		keys[i] = s.idsKey(z.Member.(string))
	}
	vals := make([]any, 0, len(zs))
	if s.cluster {
		// MGET may not span slots on a cluster; the pipeline is split
		// per node by the client.
		cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range keys {
				p.Get(ctx, k)
			}
			return nil
		})
		if err != nil && !isReplyError(cmds) {
			return nil, err
		}
		for _, c := range cmds {
			v, err := c.(*redis.StringCmd).Result()
			if err != nil {
				// Missing, or not a string (which MGET also
				// answers with nil): the read sorts it out.
				vals = append(vals, nil)
				continue
			}
			vals = append(vals, v)
		}
	} else {
		var cmds []*redis.SliceCmd
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := 0; i < len(keys); i += 1000 {
				cmds = append(cmds, p.MGet(ctx, keys[i:min(i+1000, len(keys))]...))
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, c := range cmds {
			vals = append(vals, c.Val()...)
		}
	}
	var out []news
	for i, z := range zs {
		n := news{id: z.Member.(string), seen: int64(z.Score)}
		if str, ok := vals[i].(string); ok {
			last, err := strconv.ParseInt(str, 10, 64)
			if err != nil {
				out = append(out, n)
				continue
			}
			n.last, n.lastOK = last, true
		}
		seen := n.seen
		if a := after[n.id]; a > seen && a <= n.last {
			seen = a
		}
		if n.last != seen {
			out = append(out, n)
		}
	}
	return out, nil
}

// readNews reads the unseen messages of the chats the prefilter kept: one
// pipeline of plain commands, per chat ZSCORE chat:{ID} USER (the seen id
// that counts) and ZRANGEBYSCORE msgs:{ID} from the seen id in the index
// (or the after cursor), ChunkSize messages, then the rest as fetchAll
// does. A script call costs the server some 25 µs more than the commands
// it runs, which at 1,000 chats with 10 with news was a sixth of the call.
// Rows at or below the seen id of chat:{ID} (an index lagging on a
// cluster) are dropped. A chat the plain reads cannot settle (a key of
// the wrong type, a counter that is not a number, an index ahead of
// chat:{ID}) is read again with the fetch script, whose errors name the
// key: one more round trip, for those only. A user who is no longer a
// member (a stale index entry) is left out, as the fetch script's -2 is.
func (s *Client) readNews(ctx context.Context, user string, ns []news, after map[string]int64) ([]string, []*fetched, error) {
	chats := make([]string, len(ns))
	out := make([]*fetched, len(ns))
	var plain, scripted []int
	for i, n := range ns {
		chats[i] = n.id
		if n.lastOK {
			plain = append(plain, i)
		} else {
			scripted = append(scripted, i)
		}
	}
	from := make([]int64, len(ns))
	seen := make([]*redis.FloatCmd, len(ns))
	rows := make([]*redis.ZSliceCmd, len(ns))
	if len(plain) > 0 {
		cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, i := range plain {
				n := ns[i]
				from[i] = n.seen
				if a := after[n.id]; a > n.seen && a <= n.last {
					from[i] = a
				}
				seen[i] = p.ZScore(ctx, s.chatKey(n.id), user)
				rows[i] = p.ZRangeByScoreWithScores(ctx, s.msgsKey(n.id), &redis.ZRangeBy{
					Min: "(" + strconv.FormatInt(from[i], 10), Max: "+inf", Count: int64(s.chunk)})
			}
			return nil
		})
		if err != nil && !isReplyError(cmds) {
			return nil, nil, err
		}
	}
	for _, i := range plain {
		n := ns[i]
		sc, err := seen[i].Result()
		if errors.Is(err, redis.Nil) {
			out[i] = &fetched{code: -2}
			continue
		}
		zs, err2 := rows[i].Result()
		if err != nil || err2 != nil {
			scripted = append(scripted, i)
			continue
		}
		f := &fetched{seen: int64(sc)}
		upto := f.seen
		if a := after[n.id]; a > upto && a <= n.last {
			upto = a
		}
		if upto < from[i] {
			scripted = append(scripted, i) // the index is ahead of chat:{ID}
			continue
		}
		for _, z := range zs {
			if z.Score <= float64(upto) {
				continue
			}
			raw, _ := z.Member.(string)
			f.rows = append(f.rows, row{score: strconv.FormatFloat(z.Score, 'f', -1, 64), id: z.Score, raw: raw})
		}
		if len(zs) == s.chunk {
			f.next = strconv.FormatFloat(zs[len(zs)-1].Score, 'f', -1, 64)
		}
		out[i] = f
	}
	if err := s.readOn(ctx, chats, out); err != nil {
		return nil, nil, err
	}
	if len(scripted) > 0 {
		sort.Ints(scripted)
		again := make([]string, len(scripted))
		for j, i := range scripted {
			again[j] = chats[i]
		}
		got, err := s.fetchAll(ctx, user, again, after)
		if err != nil {
			return nil, nil, err
		}
		for j, i := range scripted {
			out[i] = got[j]
		}
	}
	return chats, out, nil
}

// isReplyError reports whether every failed command failed with a reply
// from the server (an error reply such as a key of the wrong type, or
// nil), not a connection error.
func isReplyError[C interface{ Err() error }](cmds []C) bool {
	for _, c := range cmds {
		if err := c.Err(); err != nil {
			var re redis.Error
			if !errors.As(err, &re) {
				return false
			}
		}
	}
	return true
}

// MarkSeen marks the chats' messages handed to user as seen, up to the
// last one of each (a skipped value counts), and deletes the messages
// every member has now seen. handed is what Pending or Watch returned; a
// chat with Error set is left alone. A chat deleted, left or created
// anew since it was read is passed over. The error lists the chats that
// could not be marked; they will be delivered again.
func (s *Client) MarkSeen(ctx context.Context, user string, handed []ChatMessages) error {
	if err := names.User(user); err != nil {
		return err
	}
	var chats, upto []string
	var from []int64
	for _, c := range handed {
		if c.err != nil || c.Error != "" {
			continue
		}
		if last := c.upto(); last != "" {
			chats = append(chats, c.ChatID)
			upto = append(upto, last)
			from = append(from, c.from)
		}
	}
	if len(chats) == 0 {
		return nil
	}
	res, err := s.mark(ctx, user, chats, upto, from)
	if err != nil {
		return fmt.Errorf("marking %d chat(s) seen: %w", len(chats), err)
	}
	var errs []error
	var seen []redis.Z
	var trim []string
	for i, r := range res {
		if r.err != nil {
			errs = append(errs, fmt.Errorf("marking chat %s seen: %w", chats[i], r.err))
			continue
		}
		a, ok := r.val.([]any)
		if !ok || len(a) != 2 {
			continue // deleted, left or created anew meanwhile
		}
		left, _ := a[0].(int64)
		marked, _ := a[1].(string)
		score, _ := strconv.ParseFloat(marked, 64)
		seen = append(seen, redis.Z{Score: score, Member: chats[i]})
		if left > 0 {
			trim = append(trim, chats[i])
		}
	}
	// On a standalone server mark.lua has moved seen:{USER} along with
	// chat:{ID}; on a cluster it lives in another slot, and moves only
	// after chat:{ID} did.
	if s.cluster && len(seen) > 0 {
		// XX never re-adds a chat the user left meanwhile, GT never moves
		// an entry back.
		err := s.rdb.ZAddArgs(ctx, s.seenKey(user), redis.ZAddArgs{XX: true, GT: true, Members: seen}).Err()
		if err != nil {
			errs = append(errs, fmt.Errorf("updating %s: %w", s.seenKey(user), err))
		}
	}
	s.trim(ctx, trim)
	return errors.Join(errs...)
}

// marked is the mark script's reply for one chat, or its failure.
type marked struct {
	val any
	err error
}

// markBatch is the most chats one marks.lua call marks.
var markBatch = 50

// mark runs mark.lua for each chat, in one pipeline; on a standalone
// server, for two chats or more, marks.lua instead, for markBatch chats
// per call: a script call costs the server some 25 µs more than the
// commands it runs, paid once per batch instead of once per chat. A call
// deletes at most s.chunk messages, all its chats together. The error is
// for the whole pipeline.
func (s *Client) mark(ctx context.Context, user string, chats, upto []string, from []int64) ([]marked, error) {
	out := make([]marked, len(chats))
	if s.cluster || len(chats) < 2 {
		index := !s.cluster
		cmds, err := s.runScripts(ctx, markScript, len(chats), func(i int) ([]string, []any) {
			id := chats[i]
			keys := []string{s.chatKey(id), s.msgsKey(id), s.idsKey(id)}
			if index {
				keys = append(keys, s.seenKey(user))
			}
			return keys, []any{user, upto[i], id, s.chunk, strconv.FormatInt(from[i], 10)}
		})
		if err != nil {
			return nil, err
		}
		for i, c := range cmds {
			out[i].val, out[i].err = c.Result()
		}
		return out, nil
	}
	batches := (len(chats) + markBatch - 1) / markBatch
	cmds, err := s.runScripts(ctx, marksScript, batches, func(b int) ([]string, []any) {
		keys := []string{s.seenKey(user)}
		args := []any{user, s.chunk}
		for i := b * markBatch; i < min((b+1)*markBatch, len(chats)); i++ {
			id := chats[i]
			keys = append(keys, s.chatKey(id), s.msgsKey(id), s.idsKey(id))
			args = append(args, upto[i], id, strconv.FormatInt(from[i], 10))
		}
		return keys, args
	})
	if err != nil {
		return nil, err
	}
	for b, c := range cmds {
		lo, hi := b*markBatch, min((b+1)*markBatch, len(chats))
		res, err := c.Result()
		a, ok := res.([]any)
		if err == nil && (!ok || len(a) != hi-lo) {
			err = fmt.Errorf("unexpected mark reply %v", res)
		}
		for i := lo; i < hi; i++ {
			if err != nil {
				out[i].err = err
				continue
			}
			if e, ok := a[i-lo].(error); ok {
				out[i].err = e
			} else {
				out[i].val = a[i-lo]
			}
		}
	}
	return out, nil
}

// trim deletes, a bounded chunk per call, the messages every member of the
// chats has seen that mark or leave left behind. It is housekeeping: a
// failure leaves seen messages stored until the chat's next mark or leave.
func (s *Client) trim(ctx context.Context, chats []string) {
	for len(chats) > 0 {
		cmds, err := s.runScripts(ctx, trimScript, len(chats), func(i int) ([]string, []any) {
			return []string{s.chatKey(chats[i]), s.msgsKey(chats[i])}, []any{s.chunk}
		})
		if err != nil {
			return
		}
		var more []string
		for i, c := range cmds {
			if left, err := c.Int64(); err == nil && left > 0 {
				more = append(more, chats[i])
			}
		}
		chats = more
	}
}

// ChatInfo is one of a user's chats.
type ChatInfo struct {
	ChatID string `json:"chat_id"`
	SeenID int64  `json:"seen_id"`
	Unread int64  `json:"unread"`
	// Error says why the chat could not be read; the others are listed.
	Error string `json:"error,omitempty"`
}

// UserChats lists the chats user is a member of, in chat id order, with
// the number of messages they have not seen. 2 round trips whatever the
// number of chats.
func (s *Client) UserChats(ctx context.Context, user string) ([]ChatInfo, error) {
	if err := names.User(user); err != nil {
		return nil, err
	}
	zs, err := s.index(ctx, user)
	if err != nil {
		return nil, err
	}
	chats := make([]string, len(zs))
	for i, z := range zs {
		chats[i] = z.Member.(string)
	}
	cmds, err := s.runScripts(ctx, fetchScript, len(chats), func(i int) ([]string, []any) {
		id := chats[i]
		return []string{s.chatKey(id), s.msgsKey(id), s.idsKey(id)}, []any{user, "count", "0", "0"}
	})
	if err != nil {
		return nil, err
	}
	out := []ChatInfo{}
	for i, c := range cmds {
		f, err := parseFetched(c)
		if err != nil {
			return nil, fmt.Errorf("chat %s: %w", chats[i], err)
		}
		if f.fail != nil {
			out = append(out, ChatInfo{ChatID: chats[i], Error: f.err(chats[i], user).Error()})
			continue
		}
		if f.code == 0 {
			out = append(out, ChatInfo{ChatID: chats[i], SeenID: f.seen, Unread: f.count})
		}
	}
	return out, nil
}

// fetched is one chat's fetch script reply.
type fetched struct {
	code  int64 // 0, or the script's -1 (no such chat) or -2 (not a member)
	fail  error // the script failed (a key of the wrong type, say)
	seen  int64
	count int64
	rows  []row
	next  string // the score to read on after, when the read was full
}

type row struct {
	score string // as stored: the id, unless the value is not a message
	id    float64
	raw   string
}

// err is the error for a chat the user could not read, or nil.
func (f *fetched) err(chatID, user string) error {
	switch {
	case f.fail != nil:
		return fmt.Errorf("chat %s: %w", chatID, f.fail)
	case f.code == -1:
		return fmt.Errorf("chat %s: %w", chatID, ErrChatNotFound)
	case f.code == -2:
		return fmt.Errorf("%s in chat %s: %w", user, chatID, ErrNotMember)
	}
	return nil
}

// fetchAll reads every chat's unseen messages: one pipeline of the fetch
// script for all chats, reading at most firstChunk messages of each, then,
// for the chats that had more, plain ZRANGEBYSCOREs of s.chunk messages
// each from where the previous read ended, a pipeline per round. Each
// call does bounded work. A script's reply costs the server about three
// times what the same command's does (Lua copies it twice), so the big
// reads are plain commands.
func (s *Client) fetchAll(ctx context.Context, user string, chats []string, after map[string]int64) ([]*fetched, error) {
	first := min(s.chunk, firstChunk)
	cmds, err := s.runScripts(ctx, fetchScript, len(chats), func(i int) ([]string, []any) {
		id := chats[i]
		return []string{s.chatKey(id), s.msgsKey(id), s.idsKey(id)},
			[]any{user, "read", strconv.FormatInt(after[id], 10), first}
	})
	if err != nil {
		return nil, err
	}
	out := make([]*fetched, len(chats))
	for i, c := range cmds {
		if out[i], err = parseFetched(c); err != nil {
			return nil, fmt.Errorf("chat %s: %w", chats[i], err)
		}
		if rows := out[i].rows; len(rows) == first {
			out[i].next = rows[len(rows)-1].score
		}
	}
	if err := s.readOn(ctx, chats, out); err != nil {
		return nil, err
	}
	return out, nil
}

// readOn reads on the chats whose first read was full (next set): plain
// ZRANGEBYSCOREs of s.chunk messages each from where the previous read
// ended, a pipeline per round.
func (s *Client) readOn(ctx context.Context, chats []string, out []*fetched) error {
	var todo []int // indexes into chats of those with more to read
	for i, f := range out {
		if f != nil && f.next != "" {
			todo = append(todo, i)
		}
	}
	for len(todo) > 0 {
		reads := make([]*redis.ZSliceCmd, len(todo))
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for j, i := range todo {
				reads[j] = p.ZRangeByScoreWithScores(ctx, s.msgsKey(chats[i]), &redis.ZRangeBy{
					Min: "(" + out[i].next, Max: "+inf", Count: int64(s.chunk)})
			}
			return nil
		})
		if err != nil && !isReplyError(reads) {
			return err
		}
		var more []int
		for j, i := range todo {
			zs, err := reads[j].Result()
			if err != nil {
				out[i] = &fetched{fail: fmt.Errorf("%s: %w", s.msgsKey(chats[i]), err)}
				continue
			}
			out[i].next = ""
			for _, z := range zs {
				raw, _ := z.Member.(string)
				out[i].rows = append(out[i].rows, row{score: strconv.FormatFloat(z.Score, 'f', -1, 64), id: z.Score, raw: raw})
			}
			if len(zs) == s.chunk {
				out[i].next = strconv.FormatFloat(zs[len(zs)-1].Score, 'f', -1, 64)
				more = append(more, i)
			}
		}
		todo = more
	}
	return nil
}

// firstChunk is the most messages of a chat the fetch script returns; the
// rest is read by plain commands (see fetchAll).
const firstChunk = 200

// runScripts runs n calls of script in one pipeline (EVALSHA, loading the
// script once should the server not have it) and returns their commands;
// a command's error is that call's failure. The error is for the whole
// pipeline (the connection).
func (s *Client) runScripts(ctx context.Context, script *luascript.Script, n int, call func(i int) ([]string, []any)) ([]*redis.Cmd, error) {
	if n == 0 {
		return nil, nil
	}
	run := func() ([]*redis.Cmd, error) {
		cmds := make([]*redis.Cmd, n)
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i := range n {
				keys, args := call(i)
				cmds[i] = script.EvalSha(ctx, p, keys, args...)
			}
			return nil
		})
		return cmds, err
	}
	cmds, err := run()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		// Nothing ran: every command of the pipeline is the same script.
		if err := script.Load(ctx, s.rdb).Err(); err != nil {
			return nil, err
		}
		cmds, err = run()
	}
	if err != nil && !isScriptError(cmds) {
		return nil, err
	}
	return cmds, nil
}

// isScriptError reports whether every failed command failed with an error
// reply from the server (the pipeline itself went through), not a
// connection error.
func isScriptError(cmds []*redis.Cmd) bool {
	for _, c := range cmds {
		if err := c.Err(); err != nil && err != redis.Nil {
			var re redis.Error
			if !errors.As(err, &re) {
				return false
			}
		}
	}
	return true
}

func parseFetched(c *redis.Cmd) (*fetched, error) {
	res, err := c.Result()
	if err != nil {
		var re redis.Error
		if errors.As(err, &re) {
			return &fetched{fail: err}, nil
		}
		return nil, err
	}
	if code, ok := res.(int64); ok && (code == -1 || code == -2) {
		return &fetched{code: code}, nil
	}
	a, ok := res.([]any)
	if !ok || len(a) < 1 {
		return nil, fmt.Errorf("unexpected fetch reply %v", res)
	}
	f := &fetched{}
	if f.seen, err = scoreInt(a[0]); err != nil {
		return nil, err
	}
	if len(a) == 2 {
		if n, ok := a[1].(int64); ok {
			f.count = n // count mode
			return f, nil
		}
	}
	for i := 1; i+1 < len(a); i += 2 {
		raw, _ := a[i].(string)
		score, _ := a[i+1].(string)
		id, err := strconv.ParseFloat(score, 64)
		if err != nil {
			return nil, fmt.Errorf("bad score %q", score)
		}
		f.rows = append(f.rows, row{score: score, id: id, raw: raw})
	}
	return f, nil
}

// decodeRows turns stored rows into messages, and the values that are not
// messages (or whose id is not their score) into Skipped.
func decodeRows(chatID string, rows []row) ChatMessages {
	c := ChatMessages{ChatID: chatID, Messages: make([]Message, 0, len(rows))}
	for _, r := range rows {
		m, err := decodeMessage([]byte(r.raw))
		if err == nil && float64(m.ID) != r.id {
			err = fmt.Errorf("%w: id %d stored with score %s", errMessageField, m.ID, r.score)
		}
		if err != nil {
			c.Skipped = append(c.Skipped, Skipped{ID: int64(r.id), Raw: r.raw, Error: err.Error()})
		} else {
			c.Messages = append(c.Messages, m)
		}
		c.last = r.score
	}
	return c
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
