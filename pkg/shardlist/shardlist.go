package shardlist

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Defaults of Options.
const (
	defaultShardSize = 512
	defaultBatchSize = 500
	defaultWaitSlice = time.Second
	maxBatchSize     = 1000 // stays well inside Lua's unpack limits (Redis and the embedded server)

	// Bounds of one script call, so that none holds the server long
	// (measured in docs/shardlist.md): shards walked, opened or emptied,
	// and items returned by a range.
	maxShardsPerCall = 100
	rangeSteps       = maxShardsPerCall
	rangeItems       = 1000
	layoutSteps      = maxShardsPerCall
	// readRestarts is how often a read of several calls starts over when
	// the list was written between its calls, before it gives up.
	readRestarts = 5
	// fallbackSlice is the wait slice when a wait cannot be interrupted
	// (the server has no CLIENT UNBLOCK, or the user may not run it).
	fallbackSlice = 80 * time.Millisecond
)

// WakeMarker is the value a blocking pop pushes into a stale shard to wake
// itself ("Redis in Action" calls it the dummy). It is the same for every
// process, never returned by a pop, and refused by pushes.
const WakeMarker = "\x00chatq:shardlist:wake\x00"

var (
	// ErrEmpty is returned by pops when there is nothing to pop, and by
	// blocking pops when the wait ends with nothing.
	ErrEmpty = errors.New("list is empty")
	// ErrShardSize is returned for a shard size below 2 (the book's push
	// would loop forever).
	ErrShardSize = errors.New("shard size must be at least 2")
	// ErrShardSizeMismatch is matched by a *ShardSizeError: a push asked
	// for a shard size other than the one recorded with the list.
	ErrShardSizeMismatch = errors.New("shard size differs from the list's")
	// ErrReserved is returned when an item to push equals WakeMarker.
	ErrReserved = errors.New("item equals the reserved wake-up marker")
	// ErrWait is matched by the errors of a blocking pop's wait (as opposed
	// to its pop): the wait changes nothing, so a caller may retry after
	// one, even when its reply was lost.
	ErrWait = errors.New("waiting failed")
	// ErrCount is returned for a pop count below 1.
	ErrCount = errors.New("count must be at least 1")
	// ErrCorrupt is matched by errors for a list whose stored state is
	// impossible (an endpoint or count that is not a number, endpoints
	// farther apart than the items could fill, an empty or wrong-type shard
	// between the ends). The message names the key; nothing was written.
	ErrCorrupt = errors.New("list is corrupt")
	// ErrNotEmpty is returned by Delete without force for a list that
	// holds items; nothing was deleted.
	ErrNotEmpty = errors.New("list not empty")
	// ErrChanged is returned by a Range or Layout of several calls when
	// the list was written between its calls every time it was tried.
	ErrChanged = errors.New("list kept changing during a read of several calls")
	// ErrInvalid is matched (errors.Is) by the errors for an invalid list
	// key (see Names) or listing pattern, returned before any Redis call.
	// It is the same value as chat.ErrInvalid and delayq.ErrInvalid.
	ErrInvalid = errInvalid
)

// errInvalid is the ErrInvalid every package of chatq shares.
var errInvalid = names.ErrInvalid

// ShardSizeError is returned by a push that asks for a shard size other
// than the one recorded with the list by its first push.
type ShardSizeError struct {
	Key      string // the list
	Recorded int    // the size recorded with the list
	Asked    int    // the size asked for
}

func (e *ShardSizeError) Error() string {
	return fmt.Sprintf("list %s has shard size %d, not %d", e.Key, e.Recorded, e.Asked)
}

// Is makes errors.Is(err, ErrShardSizeMismatch) true.
func (e *ShardSizeError) Is(target error) bool { return target == ErrShardSizeMismatch }

// PushError is returned by a push that failed after some of its batches
// were stored: the items before Stored are in the list, in order, and a
// push of the rest resumes it without duplicates, except that the next
// Uncertain items may also be stored (their batch's reply was lost: the
// server may have applied it).
type PushError struct {
	Key       string
	Stored    int // items stored for certain (whole batches, in order)
	Uncertain int // items after those that may or may not be stored
	Total     int // items the push was given
	Err       error
}

func (e *PushError) Error() string {
	msg := fmt.Sprintf("push to list %s: stored %d of %d items", e.Key, e.Stored, e.Total)
	if e.Uncertain > 0 {
		msg += fmt.Sprintf("; the next %d may also be stored (the reply was lost)", e.Uncertain)
	}
	return msg + ": " + e.Err.Error()
}

func (e *PushError) Unwrap() error { return e.Err }

var (
	//go:embed state.lua
	stateLua string
	//go:embed push.lua
	pushLua string
	//go:embed pop.lua
	popLua string
	//go:embed wake.lua
	wakeLua string
	//go:embed layout.lua
	layoutLua string
	//go:embed range.lua
	rangeLua string
	//go:embed len.lua
	lenLua string
	//go:embed setmid.lua
	setmidLua string
	//go:embed delete.lua
	deleteLua string

	// Scripts that need the mid count count a pre-mid list's middle shards
	// (legacyCount); the others only check the keys (legacySkip).
	pushScript   = tokenScript(legacyCount, pushLua)
	popScript    = tokenScript(legacyCount, popLua)
	lenScript    = script(legacyCount, lenLua)
	rangeScript  = script(legacyCount, rangeLua)
	wakeScript   = script(legacySkip, wakeLua)
	layoutScript = script(legacySkip, layoutLua)
	setmidScript = script(legacySkip, setmidLua)
	deleteScript = script(legacyCount, deleteLua)
)

// legacyCount and legacySkip set state.lua's legacy, what it does with a
// list written before its mid key existed: count its middle shards, or
// only check the keys.
const (
	legacyCount = "local legacy = 'count'\n"
	legacySkip  = "local legacy = 'skip'\n"
)

// script is the script of body with the preludes every list script opens
// with, in order: the permission check (luascript.Permitted: allowed),
// legacy's setting, and the keys' reads and checks (state.lua).
func script(legacy, body string) *luascript.Script {
	return luascript.New(luascript.Permitted, legacy, stateLua, body)
}

// tokenScript is script for a script that takes a token: it also opens
// with the records' functions (luascript.Record), after the permission
// check they use.
func tokenScript(legacy, body string) *luascript.Script {
	return luascript.New(luascript.Permitted, luascript.Record, legacy, stateLua, body)
}

// dir is the end of the list an operation works on.
type dir int

const (
	left  dir = iota // the head: LPUSH, LPOP
	right            // the tail: RPUSH, RPOP
)

func (d dir) String() string {
	if d == left {
		return "left"
	}
	return "right"
}

// Options tune a Client; the zero value takes the defaults.
type Options struct {
	// Prefix is put in front of every key (before the '{').
	Prefix string
	// ShardSize bounds a shard to ShardSize-1 items. The first push to a
	// list records the size with it ({KEY}:size) and later pushes use the
	// recorded size: 0 means "the recorded size, or 512 for a new list";
	// any other value that differs from the recorded one makes a push
	// fail with a *ShardSizeError. A size below 2 makes every call fail
	// with ErrShardSize.
	ShardSize int
	// BatchSize is the number of items pushed per script call; 0 means 500.
	BatchSize int
	// WaitSlice is the longest single wait (BLMOVE) of a blocking pop; 0 means
	// one second. A wait runs on a connection of its own whose read
	// deadline is the client's read timeout plus the slice, so a slow
	// server cannot turn a long wait into a false "reply lost". On a client
	// that cannot give such a connection it is kept 150 ms under the
	// client's read timeout (or at a quarter of it).
	WaitSlice time.Duration
}

// Client runs sharded list operations on a Redis server; each method takes
// the list's KEY after ctx, as go-redis's list commands do. It is safe for
// concurrent use.
type Client struct {
	rdb      redis.UniversalClient
	prefix   string
	size     int
	explicit bool // size was asked for, not defaulted
	batch    int
	slice    time.Duration // a wait on the client's own connections
	ownSlice time.Duration // a wait on a waiter's connection (waiter.own)
	err      error         // a bad option: every operation returns it
	// now is the client's clock, which names the minute of a call's
	// records (runRecord); nil for time.Now (tests set it).
	now func() time.Time
}

// New returns a Client that uses rdb, and makes no Redis call. Like
// chat.New and delayq.New it returns no error: a bad option (a shard size
// below 2, ErrShardSize) is returned by every operation before it sends
// anything.
func New(rdb redis.UniversalClient, opt Options) *Client {
	var bad error
	explicit := opt.ShardSize != 0
	if opt.ShardSize == 0 {
		opt.ShardSize = defaultShardSize
	}
	if opt.ShardSize < 2 {
		bad = ErrShardSize
	}
	if opt.BatchSize <= 0 {
		opt.BatchSize = defaultBatchSize
	}
	opt.BatchSize = min(opt.BatchSize, maxBatchSize)
	if opt.WaitSlice <= 0 {
		opt.WaitSlice = defaultWaitSlice
	}
	ownSlice := opt.WaitSlice
	if rt := readTimeout(rdb); rt > 0 {
		// The pipelined wait must be answered within the read timeout,
		// and Redis ends a blocking wait up to 1000/hz ms (100 ms) late.
		opt.WaitSlice = max(min(opt.WaitSlice, max(rt-150*time.Millisecond, rt/4)), time.Millisecond)
	}
	hookNewNodes(rdb)
	return &Client{
		rdb: rdb, prefix: opt.Prefix,
		size: opt.ShardSize, explicit: explicit, batch: opt.BatchSize, slice: opt.WaitSlice,
		ownSlice: ownSlice, err: bad,
	}
}

// list is the sharded list KEY of a Client: its keys, and the operations
// on them that the Client's methods call.
type list struct {
	*Client
	key  string
	keys []string // first, last, mid, size, ver
	base string   // shard keys are base + number
}

// list checks KEY (and the Client's options) before any Redis call and
// returns the list.
func (c *Client) list(key string) (*list, error) {
	if err := names.ListKey(key); err != nil {
		return nil, err
	}
	if c.err != nil {
		return nil, c.err
	}
	base := c.prefix + "{" + key + "}:"
	return &list{
		Client: c, key: key, base: base,
		keys: []string{base + "first", base + "last", base + "mid", base + "size", base + "ver"},
	}, nil
}

// readTimeout is the client's read timeout (a pipeline waits at most that
// long for its replies), or 0 when there is none.
func readTimeout(c redis.UniversalClient) time.Duration {
	var rt time.Duration
	switch c := c.(type) {
	case *redis.Client:
		rt = c.Options().ReadTimeout
	case *redis.ClusterClient:
		rt = c.Options().ReadTimeout
	default:
		return 0
	}
	switch {
	case rt == 0:
		return 3 * time.Second // go-redis's default
	case rt < 0:
		return 0
	}
	return rt
}

// shardKey is the Redis key of shard n.
func (l *list) shardKey(n int64) string { return l.base + strconv.FormatInt(n, 10) }

// midKey is the Redis key of the count of items in the shards strictly
// between the endpoints.
func (l *list) midKey() string { return l.keys[2] }

// run runs a list script. A list written before the mid count existed with
// many middle shards is counted first (in bounded calls), and the script
// run again; script errors for impossible state become ErrCorrupt.
func (l *list) run(ctx context.Context, s luascript.Runner, args ...any) *redis.Cmd {
	return l.runKeys(ctx, s, l.keys, args...)
}

// runKeys is run with keys in place of the list's five: those five and
// more of the list's slot.
func (l *list) runKeys(ctx context.Context, s luascript.Runner, keys []string, args ...any) *redis.Cmd {
	return l.exec(ctx, func() *redis.Cmd { return s.Run(ctx, l.rdb, keys, args...) })
}

// exec makes a script call, call, as run says.
func (l *list) exec(ctx context.Context, call func() *redis.Cmd) *redis.Cmd {
	declineASK(ctx, l.rdb, l.keys[0])
	cmd := call()
	if msg, ok := scriptError(cmd.Err(), "NEEDCOUNT"); ok {
		if err := l.countMid(ctx); err != nil {
			if !errors.Is(err, ErrCorrupt) {
				err = fmt.Errorf("count the middle shards (%s): %w", msg, err)
			}
			cmd = redis.NewCmd(ctx)
			cmd.SetErr(err)
			return cmd
		}
		cmd = call()
	}
	if msg, ok := scriptError(cmd.Err(), "CORRUPT"); ok {
		cmd.SetErr(fmt.Errorf("%w: %s", ErrCorrupt, msg))
	}
	return cmd
}

// scriptError reports whether err is a script's error reply with the given
// code, and returns the rest of its message.
func scriptError(err error, code string) (string, bool) {
	if err == nil {
		return "", false // without this, re escapes: an allocation per call
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return "", false
	}
	msg, ok := strings.CutPrefix(re.Error(), code+" ")
	return msg, ok
}

// countMid counts the middle shards of a list written before the mid count
// existed, with layout calls of bounded size, and stores the count.
func (l *list) countMid(ctx context.Context) error {
	for try := 0; try < readRestarts; try++ {
		lay, err := l.layout(ctx, layoutSteps)
		if err != nil {
			return err
		}
		ok, err := l.run(ctx, setmidScript, lay.First, lay.Last, lay.Mid).Int()
		if err != nil || ok == 1 {
			return err
		}
	}
	return ErrChanged
}

// LPush pushes items onto the head of the list KEY, as LPUSH: the last
// item ends up first. It returns the list's length after the push.
//
// Items go in batches of Options.BatchSize, one script call per batch (or
// more when the shards are so small that a batch would open more than 100
// of them); items are checked before the first write. When a batch fails
// after others were stored the error is a *PushError saying how many items
// are stored; a failure of the first batch (or before it) stored nothing,
// unless it is a *PushError with Uncertain > 0.
func (c *Client) LPush(ctx context.Context, key string, items ...string) (int64, error) {
	l, err := c.list(key)
	if err != nil {
		return 0, err
	}
	return l.push(ctx, left, items)
}

// RPush pushes items onto the tail of the list KEY, as RPUSH, in batches
// as LPush does. It returns the new length.
func (c *Client) RPush(ctx context.Context, key string, items ...string) (int64, error) {
	l, err := c.list(key)
	if err != nil {
		return 0, err
	}
	return l.push(ctx, right, items)
}

// PushOptions control Push.
type PushOptions struct {
	// Head pushes onto the head, as LPush; by default onto the tail, as
	// RPush.
	Head bool
	// Token, when set, makes the push safe to repeat: a client-chosen
	// random string of 16 to 64 characters of A-Z a-z 0-9 _ - (as
	// crypto/rand.Text returns) under which each script call records its
	// answer (the length and how many items it pushed), in the list's
	// slot (field <token>, then <token>.<n>, of the hash of its minute,
	// {KEY}:T:<minute>), for 10 minutes or a little more. A
	// Push of the same items with the same token returns the first answer
	// and stores nothing more, so a caller whose reply was lost sends the
	// same call again with the same token.
	Token string
	// FirstTry, with Token, says that the token was never sent before
	// (it was made for this call), so that nothing can be recorded under
	// it: the call then looks nothing up, and is sent once (go-redis does
	// not send it again after a lost reply, whatever its MaxRetries),
	// which saves the server about half of what the token costs
	// (docs/reliability.md). Leave it false on a repeat: a repeat marked
	// FirstTry is applied again.
	FirstTry bool
}

// Push pushes items onto the tail (or, with opt.Head, the head) of the
// list KEY, as RPush (LPush), optionally with a token that makes it safe
// to repeat.
func (c *Client) Push(ctx context.Context, key string, items []string, opt PushOptions) (int64, error) {
	l, err := c.list(key)
	if err != nil {
		return 0, err
	}
	if err := checkToken(opt.Token); err != nil {
		return 0, err
	}
	side := right
	if opt.Head {
		side = left
	}
	return l.pushToken(ctx, side, items, opt.Token, opt.FirstTry)
}

// checkToken checks a token given in options ("" is none).
func checkToken(token string) error {
	if token != "" && !names.IsToken(token) {
		return fmt.Errorf("token %q: want 16 to 64 characters of A-Z a-z 0-9 _ -: %w", token, ErrInvalid)
	}
	return nil
}

// recordField is the field of the record of the call-th script call made with
// token ("" for none: no record): the token, and <token>.<call> after the
// first (luascript.RecordField), so that a repeat, making the same calls
// in the same order, gets each one's answer.
func recordField(token string, call int) string {
	if token == "" {
		return ""
	}
	return luascript.RecordField(token, call)
}

// runRecord runs s, a script that takes a token, as runKeys does, with
// the list's five keys followed by the keys of the records of a call made
// now when field is not "": the HASHes {KEY}:T:<minute> of this minute of
// the client's clock and the 10 before it, or this minute's alone on a
// first try (luascript.Script.RunRecorded), hash-tagged with the list's
// {KEY}, so in its slot. Built for each script call: a repeat, or the next
// pop of a blocking pop's wait, made in a later minute looks back from
// that minute.
func (l *list) runRecord(ctx context.Context, s *luascript.Script, field string, firstTry bool, args ...any) *redis.Cmd {
	if field == "" {
		return l.runKeys(ctx, s, l.keys, args...)
	}
	now := time.Now
	if l.now != nil {
		now = l.now
	}
	return l.exec(ctx, func() *redis.Cmd {
		return s.RunRecorded(ctx, l.rdb, l.keys, l.base+"T:", now(), firstTry, args...)
	})
}

// push pushes items onto one end (see LPush).
func (l *list) push(ctx context.Context, side dir, items []string) (int64, error) {
	return l.pushToken(ctx, side, items, "", false)
}

// pushToken is push with a token ("" for none): each script call records
// its answer (see record).
func (l *list) pushToken(ctx context.Context, side dir, items []string, token string, firstTry bool) (int64, error) {
	for _, it := range items {
		if it == WakeMarker {
			return 0, ErrReserved
		}
	}
	var n int64
	if len(items) == 0 {
		return l.llen(ctx)
	}
	explicit := "0"
	if l.explicit {
		explicit = "1"
	}
	for i, call := 0, 1; i < len(items); call++ {
		chunk := items[i:min(i+l.batch, len(items))]
		fail := func(err error) (int64, error) {
			pe := &PushError{Key: l.key, Stored: i, Total: len(items), Err: err}
			if mayBeApplied(err) {
				pe.Uncertain = len(chunk) // sent, but no reply
			}
			if pe.Stored == 0 && pe.Uncertain == 0 {
				return 0, err
			}
			return 0, pe
		}
		if err := ctx.Err(); err != nil {
			return fail(err)
		}
		args := make([]any, 0, 5+len(chunk))
		args = append(args, l.size, explicit, side.String(), maxShardsPerCall)
		field := recordField(token, call)
		if field != "" {
			args = append(args, tokenLifetime.Milliseconds(), field)
		}
		for _, it := range chunk {
			args = append(args, it)
		}
		res, err := l.runRecord(ctx, pushScript, field, firstTry, args...).Int64Slice()
		if msg, ok := scriptError(err, "SHARDSIZE"); ok {
			rec, _ := strconv.Atoi(msg)
			err = &ShardSizeError{Key: l.key, Recorded: rec, Asked: l.size}
		}
		if err == nil && (len(res) != 2 || res[1] < 1 || res[1] > int64(len(chunk))) {
			err = fmt.Errorf("bad script reply %v", res)
		}
		if err != nil {
			return fail(fmt.Errorf("push to list %s: %w", l.key, err))
		}
		// The script stops at a bound of shards opened (tiny shards):
		// the rest of the batch goes in the next call.
		n, i = res[0], i+int(res[1])
	}
	return n, nil
}

// mayBeApplied reports whether a script call that failed with err may have
// run all the same: its reply was lost (a connection error or timeout). An
// error reply (the scripts check before they write) or a context error
// (go-redis checks it before sending) means it did not run.
func mayBeApplied(err error) bool {
	var re redis.Error
	switch {
	case errors.As(err, &re), errors.Is(err, ErrCorrupt), errors.Is(err, ErrShardSizeMismatch),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	}
	return true
}

// LPop pops up to count items from the head of the list KEY, as LPOP KEY
// COUNT, in one atomic script call per 1000 items (or per 100 shards
// emptied, when shards are tiny). When a later call fails, the items
// already popped are returned with the error: they are out of the list.
// It returns ErrEmpty when the list is empty, ErrCount for a count below 1.
func (c *Client) LPop(ctx context.Context, key string, count int) ([]string, error) {
	l, err := c.list(key)
	if err != nil {
		return nil, err
	}
	return l.pop(ctx, left, count)
}

// RPop pops up to count items from the tail of the list KEY, as RPOP KEY
// COUNT (the last item first), in calls as LPop. It returns ErrEmpty when
// the list is empty.
func (c *Client) RPop(ctx context.Context, key string, count int) ([]string, error) {
	l, err := c.list(key)
	if err != nil {
		return nil, err
	}
	return l.pop(ctx, right, count)
}

// PopOptions control Pop.
type PopOptions struct {
	// Tail pops from the tail, as RPop; by default from the head, as LPop.
	Tail bool
	// Count is the most items to pop; 0 means 1.
	Count int
	// Token, when set, makes the pop safe to repeat: a client-chosen
	// random string of 16 to 64 characters of A-Z a-z 0-9 _ - (as
	// crypto/rand.Text returns) under which each script call that pops
	// items records its answer, in the list's slot (field <token> of the
	// hash of its minute, {KEY}:T:<minute>), for 10 minutes or a little
	// more. A Pop with the same token returns the same items and
	// pops no others, so a caller whose reply was lost sends the same call
	// again with the same token. A call that popped nothing records
	// nothing.
	//
	// With Block, every pop of the wait carries the token and the one that
	// takes the item records it, so a blocking pop whose reply was lost,
	// sent again with the same token (with Block, or without: then it
	// does not wait), returns that item and takes no other.
	Token string
	// FirstTry, with Token, says that the token was never sent before
	// (it was made for this call), so that nothing can be recorded under
	// it: the call then looks nothing up, and is sent once (go-redis does
	// not send it again after a lost reply, whatever its MaxRetries),
	// which saves the server about half of what the token costs
	// (docs/reliability.md). Leave it false on a repeat: a repeat marked
	// FirstTry is applied again.
	FirstTry bool
	// Block makes Pop a blocking pop of one item, as BLPop (BRPop with
	// Tail): it waits up to Wait for an item (0: until ctx ends); Count
	// must then be 0 or 1. It returns ErrEmpty when the wait ends with
	// nothing.
	Block bool
	Wait  time.Duration
}

// tokenLifetime is how long the record of a pop with a token lasts: long
// enough to cover a command's --timeout, a server restart and the repeats
// in between, short enough that records stay few (each holds the items it
// popped, plus about 90 bytes of server memory; see docs/reliability.md).
// A record's hash lives this long from its first write (record.lua), so
// a record at least 10 minutes.
const tokenLifetime = luascript.RecordLifetime

// Pop pops up to opt.Count items from the head (or, with opt.Tail, the
// tail) of the list KEY, as LPop (RPop), optionally with a token that
// makes it safe to repeat.
func (c *Client) Pop(ctx context.Context, key string, opt PopOptions) ([]string, error) {
	l, err := c.list(key)
	if err != nil {
		return nil, err
	}
	if err := checkToken(opt.Token); err != nil {
		return nil, err
	}
	side := left
	if opt.Tail {
		side = right
	}
	if opt.Count == 0 {
		opt.Count = 1
	}
	if !opt.Block {
		return l.popToken(ctx, side, opt.Count, opt.Token, opt.FirstTry)
	}
	if opt.Count != 1 {
		return nil, fmt.Errorf("a blocking pop takes one item, not %d: %w", opt.Count, ErrInvalid)
	}
	item, err := l.bpopRecord(ctx, side, opt.Wait, recordField(opt.Token, 1), opt.FirstTry)
	if err != nil {
		return nil, err
	}
	return []string{item}, nil
}

// pop pops up to count items from one end (see LPop).
func (l *list) pop(ctx context.Context, side dir, count int) ([]string, error) {
	return l.popToken(ctx, side, count, "", false)
}

// popToken is pop with a token ("" for none): the call-th script call's
// record is the field <token>, and <token>.<call> after the first (see
// recordField), so that a repeat, making the same calls in the same order,
// gets each one's answer.
func (l *list) popToken(ctx context.Context, side dir, count int, token string, firstTry bool) ([]string, error) {
	if count < 1 {
		return nil, ErrCount
	}
	var out []string
	for call := 1; len(out) < count; call++ {
		want := min(count-len(out), maxBatchSize)
		items, more, _, err := l.popCallRecord(ctx, side, want, recordField(token, call), firstTry)
		out = append(out, items...)
		if err != nil {
			return out, err
		}
		if len(items) < want && !more {
			break
		}
	}
	if len(out) == 0 {
		return nil, ErrEmpty
	}
	return out, nil
}

// popCall runs the pop script; extra is a shard into which this caller's wake
// script pushed the marker, to remove it from. It returns the items, whether
// the call stopped at its bound of shards, and the end shard. Once sent, the call is not cut short by ctx (only by the
// client's read timeout): the items it takes are out of the list, so the
// reply must be read to be returned.
func (l *list) popCall(ctx context.Context, side dir, count int, extra ...any) ([]string, bool, int64, error) {
	return l.popCallRecord(ctx, side, count, "", false, extra...)
}

// popCallRecord is popCall that records its answer under the field record
// when it is not "" (a pop with a token), or returns the answer recorded
// there (unless firstTry: see runRecord).
func (l *list) popCallRecord(ctx context.Context, side dir, count int, record string, firstTry bool, extra ...any) ([]string, bool, int64, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, 0, err
	}
	args := append([]any{side.String(), count, WakeMarker, maxShardsPerCall}, extra...)
	if record != "" {
		if len(extra) == 0 {
			args = append(args, "")
		}
		args = append(args, tokenLifetime.Milliseconds(), record)
	}
	res, err := l.runRecord(context.WithoutCancel(ctx), popScript, record, firstTry, args...).Slice()
	if err != nil {
		return nil, false, 0, fmt.Errorf("pop from list %s: %w", l.key, err)
	}
	if len(res) < 2 {
		return nil, false, 0, fmt.Errorf("pop from list %s: short script reply", l.key)
	}
	shard, _ := res[0].(int64)
	more, _ := res[1].(int64)
	items := make([]string, 0, len(res)-2)
	for _, v := range res[2:] {
		s, _ := v.(string)
		items = append(items, s)
	}
	return items, more == 1, shard, nil
}

// BLPop pops the head item of the list KEY, waiting up to timeout for one
// (0 waits until ctx ends). It returns ErrEmpty when the wait ends with
// nothing.
//
// It is the blocking pop of "Redis in Action" §11.4.4, with sub-second
// timeouts and a wait that takes nothing: see Blocking pops in the package
// documentation. When ctx ends during the wait, it returns ctx's error
// within about 100 ms and has taken nothing. An item it popped is returned
// even if ctx ended meanwhile. An error leaves nothing to clean up: calling
// it again (with the time left) resumes the wait; an error matching ErrWait
// came from the wait, which changes nothing.
func (c *Client) BLPop(ctx context.Context, key string, timeout time.Duration) (string, error) {
	l, err := c.list(key)
	if err != nil {
		return "", err
	}
	return l.bpop(ctx, left, timeout)
}

// BRPop pops the tail item of the list KEY, waiting up to timeout (0:
// until ctx ends), as BLPop does at the head.
func (c *Client) BRPop(ctx context.Context, key string, timeout time.Duration) (string, error) {
	l, err := c.list(key)
	if err != nil {
		return "", err
	}
	return l.bpop(ctx, right, timeout)
}

// bpop is the blocking pop of one end (see BLPop).
func (l *list) bpop(ctx context.Context, side dir, timeout time.Duration) (string, error) {
	return l.bpopRecord(ctx, side, timeout, "", false)
}

// bpopRecord is bpop with a record's field ("" for none: a pop with a
// token): each of its pop calls carries it, with the record keys of its
// own minute, the one that takes the item records it, and a repeat's first
// call returns it.
func (l *list) bpopRecord(ctx context.Context, side dir, timeout time.Duration, record string, firstTry bool) (string, error) {
	if timeout < 0 {
		return "", fmt.Errorf("negative timeout %s", timeout)
	}
	var deadline time.Time
	if timeout > 0 {
		deadline = time.Now().Add(timeout)
	}
	ctxDeadline := false
	if d, ok := ctx.Deadline(); ok && (deadline.IsZero() || d.Before(deadline)) {
		deadline, ctxDeadline = d, true
	}
	var w *waiter
	defer func() {
		if w != nil {
			w.close()
		}
	}()
	var marked []any // the shard a wake marker went into, to clean
	for {
		// A call that took nothing recorded nothing: the next is still
		// a first try.
		items, _, shard, err := l.popCallRecord(ctx, side, 1, record, firstTry, marked...)
		if err != nil {
			return "", err
		}
		marked = nil
		if len(items) > 0 {
			return items[0], nil
		}
		if w == nil {
			if w, err = l.newWaiter(ctx, shard); err != nil {
				return "", err
			}
		}
		wait := l.slice
		if w.own != nil {
			wait = l.ownSlice
		}
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				if ctxDeadline {
					return "", context.DeadlineExceeded
				}
				return "", ErrEmpty
			}
			wait = min(wait, left)
		}
		if !w.interruptible {
			wait = min(wait, fallbackSlice)
		}
		item, ok, err := w.wait(ctx, side, shard, wait)
		if err != nil {
			return "", err
		}
		if ok && item == WakeMarker {
			marked = []any{shard}
		}
		// Woken (or timed out): the wait took nothing, so look again.
	}
}

// waiter waits on one connection of its own, so that a wait can be cut
// short when ctx ends: CLIENT UNBLOCK from another connection makes the
// BLMOVE return at once. Without CLIENT ID or CLIENT UNBLOCK (the embedded
// server, a user not allowed to run them, a managed service without
// UNBLOCK) waits are cut into short slices instead.
type waiter struct {
	l    *list
	node *redis.Client // the client of the node the list lives on
	// own is a one-connection client of the waiter's own on that node,
	// whose read deadline allows for the wait (see WaitSlice).
	own           *redis.Client
	conn          *redis.Conn
	id            int64
	interruptible bool
}

func (l *list) newWaiter(ctx context.Context, shard int64) (*waiter, error) {
	var node *redis.Client
	switch c := l.rdb.(type) {
	case *redis.Client:
		node = c
	case *redis.ClusterClient:
		var err error
		if node, err = c.MasterForKey(ctx, l.shardKey(shard)); err != nil {
			return nil, fmt.Errorf("wait on list %s: %w: %w", l.key, ErrWait, err)
		}
	}
	if node == nil {
		w := &waiter{l: l}
		return w, w.load(ctx, l.rdb)
	}
	opt := *node.Options()
	if opt.ReadTimeout >= 0 {
		opt.ReadTimeout = readTimeout(node) + l.ownSlice
	}
	opt.PoolSize, opt.MinIdleConns, opt.MaxIdleConns = 1, 0, 1
	// go-redis writes to the caller's MaintNotificationsConfig, under a lock
	// of its own, when one of its connections starts: reading it here would
	// race. A waiter holds one short-lived blocking connection and needs no
	// maintenance notifications, so it gets a config of its own.
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	own := redis.NewClient(&opt)
	w := &waiter{l: l, node: node, own: own, conn: own.Conn()}
	// CLIENT UNBLOCK of no client (ids start at 1) changes nothing and
	// tells whether the server has it and this user may run it: a server
	// may have CLIENT ID without it (Google Memorystore does).
	var id *redis.IntCmd
	var unblock *redis.IntCmd
	_, _ = w.conn.Pipelined(ctx, func(p redis.Pipeliner) error {
		id = p.ClientID(ctx)
		unblock = p.ClientUnblock(ctx, 0)
		return nil
	})
	if id.Err() == nil && unblock.Err() == nil {
		w.id, w.interruptible = id.Val(), true
	}
	if err := w.load(ctx, w.conn); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// load loads the wake script, which each wait then runs by its SHA in a
// pipeline (where a NOSCRIPT reply would come only after the wait).
func (w *waiter) load(ctx context.Context, c redis.Scripter) error {
	if err := wakeScript.Load(ctx, c).Err(); err != nil {
		return fmt.Errorf("wait on list %s: %w: %w", w.l.key, ErrWait, err)
	}
	return nil
}

func (w *waiter) close() {
	if w.conn != nil {
		w.conn.Close()
	}
	if w.own != nil {
		w.own.Close()
	}
}

// wait pipelines the wake script with one wait of at most wait on shard:
// BLMOVE of the shard onto itself, from and to this end, which blocks like
// BLPOP/BRPOP but puts the element straight back where it was, in the same
// atomic step, so the shard is unchanged. It returns that element (an item,
// or WakeMarker); ok is false when the wait timed out or was cut short.
func (w *waiter) wait(ctx context.Context, side dir, shard int64, wait time.Duration) (item string, ok bool, err error) {
	l := w.l
	// go-redis rounds blocking timeouts to whole seconds; Redis takes
	// fractions, so the command is sent as is. 0 would mean forever, and
	// so would 0.001 on Redis 6.2, which truncates the timeout to whole
	// milliseconds of a long double a hair under 1 (7.0 rounds up): 2 ms
	// at least.
	secs := strconv.FormatFloat(max(wait, 2*time.Millisecond).Seconds(), 'f', 3, 64)
	key := l.shardKey(shard)
	var c redis.Cmdable = l.rdb
	if w.conn != nil {
		c = w.conn
	}
	if w.interruptible {
		stop := context.AfterFunc(ctx, func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			w.node.ClientUnblock(ctx, w.id)
		})
		defer stop()
	}
	for try := 0; ; try++ {
		// The wake script goes by its SHA (loaded by newWaiter); after a
		// SCRIPT FLUSH it is loaded again.
		pipe := c.Pipeline()
		wake := pipe.EvalSha(ctx, wakeScript.Hash(), l.keys, side.String(), shard, WakeMarker)
		move := pipe.Do(ctx, "blmove", key, key, side.String(), side.String(), secs)
		_, _ = pipe.Exec(ctx)
		if err := wake.Err(); err != nil {
			if try == 0 && strings.HasPrefix(err.Error(), "NOSCRIPT") {
				if err := w.load(ctx, c); err != nil {
					return "", false, err
				}
				continue
			}
			if msg, ok := scriptError(err, "CORRUPT"); ok {
				err = fmt.Errorf("%w: %s", ErrCorrupt, msg)
			}
			return "", false, fmt.Errorf("wait on list %s: %w: %w", l.key, ErrWait, err)
		}
		item, err = move.Text()
		if errors.Is(err, redis.Nil) {
			return "", false, nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return "", false, ctx.Err()
			}
			return "", false, fmt.Errorf("wait on list %s: %w: %w", l.key, ErrWait, err)
		}
		return item, true, nil
	}
}

// LLen is the number of items in the list KEY, as LLEN, in one script call
// whose cost does not depend on the length: LLEN of the two end shards plus
// the count kept for the shards between them. A list that does not exist
// has length 0.
func (c *Client) LLen(ctx context.Context, key string) (int64, error) {
	l, err := c.list(key)
	if err != nil {
		return 0, err
	}
	return l.llen(ctx)
}

func (l *list) llen(ctx context.Context) (int64, error) {
	in, err := l.info(ctx)
	if err != nil {
		return 0, err
	}
	return in.Length, nil
}

// Info is what Client.Info reads of a list.
type Info struct {
	Key    string `json:"key"`
	Length int64  `json:"length"` // items, as LLEN
	First  int64  `json:"first"`  // number of the left end shard
	Last   int64  `json:"last"`   // number of the right end shard
	Shards int64  `json:"shards"` // Last - First + 1
	// ShardSize is the size recorded with the list by its first push (0
	// for a list that has none: new, or written before sizes were
	// recorded).
	ShardSize int64 `json:"shard_size"`
}

// Info returns the length, the end shards and the recorded shard size of
// the list KEY, in the one script call of LLen, O(1) in the length. A list
// that does not exist has length 0 and one shard, number 0.
func (c *Client) Info(ctx context.Context, key string) (*Info, error) {
	l, err := c.list(key)
	if err != nil {
		return nil, err
	}
	return l.info(ctx)
}

func (l *list) info(ctx context.Context) (*Info, error) {
	res, err := l.run(ctx, lenScript).Int64Slice()
	if err == nil && len(res) != 4 {
		err = fmt.Errorf("bad script reply %v", res)
	}
	if err != nil {
		return nil, fmt.Errorf("length of list %s: %w", l.key, err)
	}
	return &Info{Key: l.key, Length: res[0], First: res[1], Last: res[2], Shards: res[2] - res[1] + 1, ShardSize: res[3]}, nil
}

// LRange returns the items of the list KEY from index start to stop
// inclusive, negative indexes counting from the tail, as LRANGE. A range of
// at most 1000 items near either end is one atomic script call. A longer
// one, or one that has to walk more than 100 shards, takes several calls,
// each bounded; if the list is written between them the read starts over,
// so the result is always what one atomic LRANGE would have returned.
func (c *Client) LRange(ctx context.Context, key string, start, stop int64) ([]string, error) {
	l, err := c.list(key)
	if err != nil {
		return nil, err
	}
	return l.rangeSteps(ctx, start, stop, rangeSteps, rangeItems)
}

func (l *list) rangeSteps(ctx context.Context, start, stop int64, steps, items int) ([]string, error) {
	fail := func(err error) ([]string, error) {
		return nil, fmt.Errorf("range of list %s: %w", l.key, err)
	}
restart:
	for try := 0; try < readRestarts; try++ {
		out := []string{}
		ver, cursor := "", []any{"new", start, stop, 0}
		for {
			if err := ctx.Err(); err != nil {
				return fail(err)
			}
			args := append([]any{WakeMarker, ver}, cursor...)
			res, err := l.run(ctx, rangeScript, append(args, steps, items)...).Slice()
			if err != nil {
				return fail(err)
			}
			if len(res) < 2 {
				return fail(errors.New("short script reply"))
			}
			ver, _ = res[0].(string)
			phase, _ := res[1].(string)
			if phase == "changed" {
				continue restart
			}
			if len(res) < 5 {
				return fail(errors.New("short script reply"))
			}
			for _, v := range res[5:] {
				s, _ := v.(string)
				out = append(out, s)
			}
			if phase == "done" {
				return out, nil
			}
			cursor = []any{phase, res[2], res[3], res[4]}
		}
	}
	return fail(ErrChanged)
}

// Layout describes how a list is stored.
type Layout struct {
	Key    string  `json:"key"`
	First  int64   `json:"first"`  // number of the left end shard
	Last   int64   `json:"last"`   // number of the right end shard
	Length int64   `json:"length"` // items in all shards
	Shards []Shard `json:"shards"` // first to last
	// Mid is the count kept in {KEY}:mid: the items in the shards strictly
	// between First and Last. It equals the sum of those shards' lengths.
	Mid int64 `json:"mid"`
	// ShardSize is the size recorded with the list by its first push
	// (0 for a list written before sizes were recorded).
	ShardSize int64 `json:"shard_size"`
}

// Shard is one shard of a Layout.
type Shard struct {
	Index  int64  `json:"index"`
	Key    string `json:"key"` // the Redis key, prefix included
	Length int64  `json:"length"`
}

// Layout returns how the list KEY is stored: the endpoints, the mid count
// and every shard's length, in one script call per 100 shards. When the
// list is written between the calls it starts over, so the result is
// always one consistent state.
func (c *Client) Layout(ctx context.Context, key string) (*Layout, error) {
	l, err := c.list(key)
	if err != nil {
		return nil, err
	}
	return l.layoutSteps(ctx, layoutSteps)
}

func (l *list) layoutSteps(ctx context.Context, steps int) (*Layout, error) {
	lay, err := l.layout(ctx, steps)
	if err != nil {
		return nil, fmt.Errorf("layout of list %s: %w", l.key, err)
	}
	return &lay, nil
}

func (l *list) layout(ctx context.Context, steps int) (Layout, error) {
	fail := func(err error) (Layout, error) { return Layout{}, err }
restart:
	for try := 0; try < readRestarts; try++ {
		lay := Layout{Key: l.key, Shards: []Shard{}}
		ver, from := "", ""
		stored := int64(-1)
		for {
			if err := ctx.Err(); err != nil {
				return fail(err)
			}
			res, err := l.run(ctx, layoutScript, from, steps, ver).Slice()
			if err != nil {
				return fail(err)
			}
			if len(res) == 1 {
				continue restart
			}
			if len(res) < 6 {
				return fail(errors.New("short script reply"))
			}
			ver, _ = res[0].(string)
			lay.First, _ = res[1].(int64)
			lay.Last, _ = res[2].(int64)
			stored, _ = res[3].(int64)
			lay.ShardSize, _ = res[4].(int64)
			idx, _ := res[5].(int64)
			for _, v := range res[6:] {
				n, _ := v.(int64)
				lay.Shards = append(lay.Shards, Shard{Index: idx, Key: l.shardKey(idx), Length: n})
				lay.Length += n
				idx++
			}
			if idx > lay.Last {
				break
			}
			from = strconv.FormatInt(idx, 10)
		}
		var mid int64
		for _, s := range lay.Shards {
			if s.Index > lay.First && s.Index < lay.Last {
				mid += s.Length
			}
		}
		lay.Mid = mid
		if stored >= 0 && stored != mid {
			return fail(fmt.Errorf("%w: %s counts %d items between the ends, but the shards there hold %d",
				ErrCorrupt, l.midKey(), stored, mid))
		}
		return lay, nil
	}
	return fail(ErrChanged)
}

// Delete removes the list KEY and returns how many items it held at the
// start. A list holding items is deleted only with force (else
// ErrNotEmpty, and nothing changes: the check and the first deletion are
// one script). It takes calls of at most 100 shards each (delete.lua),
// the list's own keys last, so a huge list never costs one long call; a
// push during a forced delete lands in the list and goes with it. A list
// that does not exist deletes nothing and returns 0.
func (c *Client) Delete(ctx context.Context, key string, force bool) (int64, error) {
	l, err := c.list(key)
	if err != nil {
		return 0, err
	}
	arg := ""
	if force {
		arg = "force"
	}
	held := int64(-1)
	for {
		if err := ctx.Err(); err != nil {
			return max(held, 0), err
		}
		res, err := l.run(ctx, deleteScript, arg).Slice()
		if err != nil {
			return max(held, 0), fmt.Errorf("delete list %s: %w", key, err)
		}
		status, _ := res[0].(string)
		n, _ := res[1].(int64)
		switch status {
		case "notempty":
			return n, fmt.Errorf("list %s holds %d items: %w", key, n, ErrNotEmpty)
		case "more":
			if held < 0 {
				held = n
			}
		default: // "done"
			if held < 0 {
				held = n
			}
			return held, nil
		}
	}
}
