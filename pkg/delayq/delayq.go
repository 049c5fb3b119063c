package delayq

import (
	"context"
	"crypto/rand"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/pkg/delayq/internal/inside"
	"github.com/redis/go-redis/v9"
)

// Sentinel errors. Errors matching ErrInvalid (bad names, values out of
// range, a message over maxsize) are the caller's mistake and are detected
// before anything is written.
var (
	ErrQueueNotFound   = errors.New("queue not found")
	ErrQueueExists     = errors.New("queue exists")
	ErrMessageNotFound = errors.New("message not found")
	// ErrInvalid is the same value as chat.ErrInvalid and
	// shardlist.ErrInvalid.
	ErrInvalid              = errInvalid
	ErrMessageTooLong error = invalidError("message too long")
	// ErrQueueNotEmpty: Delete or Purge found more messages than it was
	// allowed to destroy, and changed nothing.
	ErrQueueNotEmpty = errors.New("queue not empty")
)

// errInvalid is the ErrInvalid of every chatq package.
var errInvalid = names.ErrInvalid

// errInvalidValue is a value out of range.
var errInvalidValue error = invalidError("invalid value")

// invalidError is a kind of bad input: it matches ErrInvalid without
// repeating its text in every message.
type invalidError string

func (e invalidError) Error() string        { return string(e) }
func (e invalidError) Is(target error) bool { return target == ErrInvalid }

// RSMQ's limits and defaults.
const (
	// maxSeconds is the largest vt and delay RSMQ accepts, in seconds.
	maxSeconds = 9999999
	// maxsize: minMaxSize to maxMaxSize, or unlimited (-1).
	minMaxSize = 1024
	maxMaxSize = 65536
	unlimited  = -1

	defaultNamespace = "rsmq"
	defaultVT        = 30 * time.Second
	defaultMaxSize   = 65536
)

// zero is the value an option of type time.Duration takes to ask for 0
// where 0 means a default (go-redis's -1; see the package doc).
const zero time.Duration = -1

// Options configure a Client.
type Options struct {
	// Namespace is RSMQ's ns option; "" means "rsmq".
	Namespace string
	// Prefix is put in front of every key and channel (chatq's --prefix).
	Prefix string
	// HashTag wraps the queue name in a hash tag ({q}) so that a queue's
	// keys share a cluster slot. New sets it for a *redis.ClusterClient.
	HashTag bool
}

// Client operates the queues of one namespace.
type Client struct {
	rdb  redis.UniversalClient
	ns   string // prefix + namespace + ":"
	tag  bool
	mu   sync.Mutex
	dead map[string]string // queue -> its dead-letter queue, as last seen
	// now is the client's clock, which names the minute of a call's
	// records (runRecorded); nil for time.Now (tests set it).
	now func() time.Time
}

// New returns a Client for rdb.
func New(rdb redis.UniversalClient, opt Options) *Client {
	ns := opt.Namespace
	if ns == "" {
		ns = defaultNamespace
	}
	// A cluster client always needs the hash tag: without it a queue's two
	// keys land in different slots and every script fails with CROSSSLOT.
	_, cluster := rdb.(*redis.ClusterClient)
	return &Client{rdb: rdb, ns: opt.Prefix + ns + ":", tag: opt.HashTag || cluster, dead: map[string]string{}}
}

// keys returns queue q's ZSET and HASH keys (RSMQ's) and chatq's index of
// received messages (a ZSET id -> visible-at that stats counts in flight
// from).
func (c *Client) keys(q string) []string {
	k := c.ns + q
	if c.tag {
		k = c.ns + "{" + q + "}"
	}
	return []string{k, k + ":Q", k + ":R"}
}

func (c *Client) queuesKey() string { return c.ns + registryName }

// channel is queue q's realtime channel, where every push publishes.
func (c *Client) channel(q string) string { return c.ns + "rt:" + q }

// script is the script of body with the preludes every queue script opens
// with, in order: the permission check (luascript.Permitted: allowed) and
// the checks they share (queue.lua).
func script(body string) *luascript.Script {
	return luascript.New(luascript.Permitted, queueLua, body)
}

// tokenScript is script for a script that takes a token: it also
// opens with the records' functions (luascript.Record).
func tokenScript(body string) *luascript.Script {
	return luascript.New(luascript.Permitted, luascript.Record, queueLua, body)
}

var (
	//go:embed queue.lua
	queueLua string
	//go:embed create.lua
	createLua    string
	createScript = script(createLua)
	//go:embed set.lua
	setLua    string
	setScript = script(setLua)
	//go:embed push.lua
	pushLua    string
	pushScript = tokenScript(pushLua)
	//go:embed pushmany.lua
	pushManyLua    string
	pushManyScript = tokenScript(pushManyLua)
	//go:embed receive.lua
	receiveLua    string
	receiveScript = tokenScript(receiveLua)
	//go:embed ack.lua
	ackLua    string
	ackScript = tokenScript(ackLua)
	//go:embed retry.lua
	retryLua    string
	retryScript = tokenScript(retryLua)
	//go:embed stats.lua
	statsLua    string
	statsScript = script(statsLua)
	//go:embed peek.lua
	peekLua    string
	peekScript = script(peekLua)
	//go:embed purge.lua
	purgeLua    string
	purgeScript = script(purgeLua)
	//go:embed delete.lua
	deleteLua    string
	deleteScript = script(deleteLua)
	//go:embed reindex_begin.lua
	reindexBeginLua    string
	reindexBeginScript = script(reindexBeginLua)
	//go:embed reindex_step.lua
	reindexStepLua    string
	reindexStepScript = script(reindexStepLua)
	//go:embed reindex_end.lua
	reindexEndLua    string
	reindexEndScript = script(reindexEndLua)
)

// stepCount is the COUNT hint of each bounded step (index rebuild, list):
// well under a millisecond of server time per call on an idle server.
const stepCount = 100

// maxBatch is the most messages one receive or ack script call handles
// (a receive of 1,000 took 66 ms of server time in one call on a loaded
// machine, an ack of 10,000 ids 260 ms).
const maxBatch = 100

// reindexBudget is the server time one reindex step spends before it
// returns (it checks after each ZSCAN of stepCount messages).
const reindexBudget = time.Millisecond

// peekPage is how many messages one peek call reads: each costs a ZRANGE
// entry and an HMGET inside the script, and bodies may be up to 64 KiB.
const peekPage = 50

// searchPage is how many candidates one peek call returns when the client
// matches them (a regular expression): as many as an export page.
const searchPage = 250

// QueueError is an error about one queue, which it names: errors.As finds
// the queue a failure is about (a missing dead-letter queue, say, rather
// than the queue a command named).
type QueueError struct {
	Queue string
	Err   error
}

func (e *QueueError) Error() string { return fmt.Sprintf("queue %q: %v", e.Queue, e.Err) }
func (e *QueueError) Unwrap() error { return e.Err }

// notFound wraps ErrQueueNotFound with the queue's name.
func notFound(q string) error { return &QueueError{Queue: q, Err: ErrQueueNotFound} }

// CheckName checks a queue name against RSMQ's rule (1 to 160 characters
// from [A-Za-z0-9_-]), and refuses QUEUES: queue QUEUES's ZSET would be
// <ns>:QUEUES, RSMQ's registry of queue names (rsmq accepts it and breaks
// its registry). No other name can collide with the layout: names have no
// ':', so <ns>:<q>:Q and <ns>:<q>:R are never another queue's keys. Every
// method checks its queue names before any Redis call; CheckName is for
// checking them earlier still.
func CheckName(q string) error {
	if q == registryName {
		return &names.Error{Kind: "queue name", Name: q, Reason: "is RSMQ's registry of queue names (<ns>:QUEUES)"}
	}
	return names.Queue(q)
}

const registryName = "QUEUES"

// CheckDuration checks a vt or delay as the methods do, naming it what in
// the error: from 0 to 9999999 seconds (RSMQ's limit) in whole units of
// unit, which is time.Second for a queue's attributes (RSMQ stores
// seconds) and time.Millisecond for one message's delay or one receive's
// vt. It does not accept -1, which an option takes to mean 0.
func CheckDuration(what string, d, unit time.Duration) error {
	if d < 0 {
		return fmt.Errorf("%s %s: must not be negative: %w", what, d, errInvalidValue)
	}
	if d > maxSeconds*time.Second {
		return fmt.Errorf("%s %s: must be at most %ds (RSMQ's limit): %w", what, d, maxSeconds, errInvalidValue)
	}
	switch {
	case d%time.Millisecond != 0:
		return fmt.Errorf("%s %s: must be whole milliseconds: %w", what, d, errInvalidValue)
	case unit == time.Second && d%time.Second != 0:
		return fmt.Errorf("%s %s: must be whole seconds, as RSMQ stores it: %w", what, d, errInvalidValue)
	}
	return nil
}

// checkOption checks a duration option whose 0 means a default and -1
// means 0 (see the package doc), and returns the duration asked for and
// whether it was given.
func checkOption(what string, d, unit time.Duration) (time.Duration, bool, error) {
	switch d {
	case 0:
		return 0, false, nil
	case zero:
		return 0, true, nil
	}
	return d, true, CheckDuration(what, d, unit)
}

// checkMaxSize checks maxsize: minMaxSize to maxMaxSize, or unlimited.
func checkMaxSize(n int) error {
	if n == unlimited || n >= minMaxSize && n <= maxMaxSize {
		return nil
	}
	return fmt.Errorf("maxsize %d: must be from %d to %d, or -1 for unlimited: %w", n, minMaxSize, maxMaxSize, errInvalidValue)
}

// checkID checks a message id against RSMQ's format.
func checkID(id string) error {
	if len(id) != 32 {
		return fmt.Errorf("message id %q: must be 32 characters: %w", id, errInvalidValue)
	}
	for i := 0; i < len(id); i++ {
		b := id[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == ':') {
			return fmt.Errorf("message id %q: may only contain letters, digits and ':': %w", id, errInvalidValue)
		}
	}
	return nil
}

// len16 is the length of body in UTF-16 code units, what RSMQ's maxsize
// counts (JavaScript's String length). Invalid UTF-8 counts one per byte,
// as Node decodes each such byte to U+FFFD.
func len16(body string) int {
	n := 0
	for _, r := range body {
		if r == utf8.RuneError {
			n++
			continue
		}
		n += utf16.RuneLen(r)
	}
	return n
}

const idChars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomID returns the 22 random characters that end a message id,
// uniform over idChars (bytes of 248 and above are redrawn).
func randomID() string {
	out := make([]byte, 0, 22)
	var buf [32]byte
	for len(out) < 22 {
		_, _ = rand.Read(buf[:]) // crypto/rand.Read never fails
		for _, b := range buf {
			if b < 248 && len(out) < 22 {
				out = append(out, idChars[b%62])
			}
		}
	}
	return string(out)
}

// sentAt is when a message was pushed, read from its id (RSMQ's "sent").
func sentAt(id string) time.Time {
	if len(id) < 10 {
		return time.Time{}
	}
	us, err := strconv.ParseInt(id[:10], 36, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMicro(us)
}

func msTime(s string) time.Time {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s == "" {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

func secTime(s string) time.Time {
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.Unix(sec, 0)
}

// reply helpers: the scripts return flat arrays of strings and integers.
func str(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

func num(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case string:
		n, _ := strconv.ParseInt(x, 10, 64)
		return n
	}
	return 0
}

func run(ctx context.Context, c redis.Scripter, s luascript.Runner, keys []string, args ...any) ([]any, error) {
	return reply(s.Run(ctx, c, keys, args...))
}

// reply is a script call's reply as run returns it.
func reply(cmd *redis.Cmd) ([]any, error) {
	v, err := cmd.Result()
	if err != nil {
		return nil, err
	}
	a, ok := v.([]any)
	if !ok || len(a) == 0 {
		return nil, fmt.Errorf("unexpected reply %v", v)
	}
	return a, nil
}

// scripts returns the source of every Lua script of the package by file
// name, as sent to the server after luascript.Permitted, for
// delayqtest.Scripts.
func scripts() map[string]string {
	out := map[string]string{
		"create.lua": createLua, "set.lua": setLua, "push.lua": pushLua, "pushmany.lua": pushManyLua, "receive.lua": receiveLua,
		"ack.lua": ackLua, "retry.lua": retryLua, "stats.lua": statsLua, "peek.lua": peekLua,
		"purge.lua": purgeLua, "delete.lua": deleteLua, "reindex_begin.lua": reindexBeginLua,
		"reindex_step.lua": reindexStepLua, "reindex_end.lua": reindexEndLua,
		"redrive.lua": redriveLua, "get.lua": getLua,
		"export.lua": exportLua, "import.lua": importLua,
	}
	for name, body := range out {
		out[name] = queueLua + body
	}
	// The scripts that take a token (tokenScript) open with the records'
	// functions too.
	for _, name := range []string{"push.lua", "pushmany.lua", "receive.lua", "ack.lua", "retry.lua"} {
		out[name] = luascript.Record + out[name]
	}
	return out
}

func init() {
	inside.Client = func(c any) (redis.UniversalClient, func(string) []string) {
		dc := c.(*Client)
		return dc.rdb, dc.keys
	}
	inside.Scripts = scripts
}
