package chat

import (
	"context"
	"strconv"
	"time"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/redis/go-redis/v9"
)

// WatchOptions change how Watch follows a user's chats.
type WatchOptions struct {
	// Mark marks what Watch delivers as seen, like Pending; by default it
	// only reads, remembering in memory what it has delivered.
	Mark bool
	// Poll is how often Watch reads even without a notification, to catch
	// anything a dropped connection missed (default 5s).
	Poll time.Duration
	// After, when not nil, holds per chat the last id already delivered:
	// Watch starts after it and records there what it delivers, so a
	// caller that calls Watch again after an error (a lost connection)
	// resumes without repeating a message. Without Mark it is the only
	// record of what was delivered.
	After map[string]int64
	// OnRead, when set, is called after each successful read, so a caller
	// can tell that the server answers again.
	OnRead func()
	// Timeout bounds the wait for the subscription's confirmation and each
	// read (default 10s), so a lost reply cannot hang Watch.
	Timeout time.Duration
}

// Watch delivers user's unseen messages to fn, then every new message as it
// arrives, until ctx is done (it then returns nil) or fn or Redis fails.
// With opts.Mark it marks them seen after fn returned nil (MarkSeen), so a
// message fn did not handle is delivered again next time. A chat that
// cannot be read is passed to fn (with Error set) once, not at every read.
//
// It subscribes to Channel, on which every send announces its chat id, and
// reads (Pending) when a notification arrives, so it sleeps while the chats
// are idle; a notification burst costs one read. It also reads every
// opts.Poll in case a notification was lost (every second at most when it
// may not subscribe). A read in flight when ctx ends
// is finished and delivered, so nothing marked seen is lost.
func (s *Client) Watch(ctx context.Context, user string, opts WatchOptions, fn func([]ChatMessages) error) error {
	if err := names.User(user); err != nil {
		return err
	}
	if opts.Poll <= 0 {
		opts.Poll = 5 * time.Second
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 10 * time.Second
	}
	sub := s.rdb.Subscribe(ctx, s.channel())
	defer sub.Close()
	// Wait for the subscription before the first read, so that nothing sent
	// between the read and the subscription goes unnoticed. The wait has a
	// deadline, and an interrupt ends it at once (closing the subscription
	// ends the read).
	stop := context.AfterFunc(ctx, func() { _ = sub.Close() })
	_, err := sub.ReceiveTimeout(ctx, opts.Timeout)
	stop()
	if ctx.Err() != nil {
		return nil
	}
	// Without notifications (this user may not use the channel, Redis 7's
	// default for a new ACL user, or the server lacks SUBSCRIBE), reads
	// come every second at most: notes is nil and never fires.
	var notes <-chan *redis.Message
	switch {
	case redis.HasErrorPrefix(err, "NOPERM") || redis.HasErrorPrefix(err, "unknown command"):
		_ = sub.Close()
		opts.Poll = min(opts.Poll, time.Second)
	case err != nil:
		return err
	default:
		notes = sub.Channel()
	}
	after := opts.After
	if after == nil {
		after = map[string]int64{}
	}
	reported := map[string]string{} // the error last passed on, per chat
	read := func() error {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), opts.Timeout)
		defer cancel()
		got, err := s.Pending(rctx, user, PendingOptions{Peek: true, After: after})
		if err != nil {
			return err
		}
		if opts.OnRead != nil {
			opts.OnRead()
		}
		news := got[:0]
		for _, c := range got {
			if c.Error != "" {
				// Passed on once, not at every read.
				if reported[c.ChatID] != c.Error {
					reported[c.ChatID] = c.Error
					news = append(news, c)
				}
				continue
			}
			delete(reported, c.ChatID)
			if last, err := strconv.ParseFloat(c.upto(), 64); err == nil {
				after[c.ChatID] = int64(last)
			}
			news = append(news, c)
		}
		if len(news) == 0 {
			return nil
		}
		if err := fn(news); err != nil {
			return err
		}
		if opts.Mark {
			// After delivery: what fn did not get is never marked.
			return s.MarkSeen(rctx, user, news)
		}
		return nil
	}
	poll := time.NewTimer(opts.Poll)
	defer poll.Stop()
	for {
		if err := read(); err != nil {
			return err
		}
		if !poll.Stop() {
			select {
			case <-poll.C:
			default:
			}
		}
		poll.Reset(opts.Poll)
		select {
		case <-ctx.Done():
			return nil
		case <-poll.C:
		case <-notes:
			// Coalesce a burst of notifications into one read.
			for drained := false; !drained; {
				select {
				case <-notes:
				default:
					drained = true
				}
			}
		}
	}
}
