// Package snapshot reads what chatq keeps under a prefix, the queues,
// sharded lists and chats and the server, in bounded steps: discovery by
// the packages' listings (SSCAN of the queue registry, SCANs of the keys)
// carried on from one snapshot to the next, and the numbers of at most a
// limit of each. chatq top and chatq metrics read through it.
package snapshot

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/queuekinds"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/delayq"
	pqueues "github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

// Limits bound the work of one refresh, whatever the number of keys.
type Limits struct {
	Queues int // queues examined (stats) per refresh
	// Lists sharded lists are examined per refresh, and Chats chats in
	// turn; 0 leaves lists (or chats) out, their discovery included.
	Lists int
	Chats int
	// ScanCalls SCANs of COUNT ScanCount per refresh discover lists, and
	// as many chats; RegistryCalls SSCANs of COUNT ScanCount read the queue
	// registry.
	ScanCalls     int
	RegistryCalls int
	ScanCount     int64
}

// DefaultLimits are the limits of `chatq top` unless flags change them.
var DefaultLimits = Limits{Queues: 30, Lists: 20, Chats: 50, ScanCalls: 4, RegistryCalls: 2, ScanCount: 500}

// MaxPeek is the most messages the queue view asks for.
const MaxPeek = 50

// Options configure a Collector.
type Options struct {
	Namespace string // the queues' RSMQ namespace; "" is "rsmq"
	Prefix    string // in front of every key
	Cluster   bool   // the server is a Redis Cluster: queue names are hash-tagged
	Limits    Limits
	// Interval is the time between refreshes: a rate is measured over at
	// least half of it.
	Interval time.Duration
	// Clock is the client's clock (time.Now when nil); tests drive it.
	Clock func() time.Time
	// Filter, when set, keeps the names of queues, lists and chats it
	// matches; the others are not read, nor counted as known.
	Filter *Filter
	// DeadLetters also reads the dead-letter queues of the queues read
	// that are not among them (past Limits.Queues, or filtered out), for
	// their depth: at most one more stats call per queue read.
	DeadLetters bool
	// NoRates leaves the queues' rates out (PushRate, RecvHistory...):
	// no counters or history are kept for them. A history is a minute of
	// samples, one per refresh: without Interval (chatq metrics, refreshed
	// by each scrape) its size would follow the scrape rate.
	NoRates bool
}

// Collector takes snapshots. It keeps what discovery found so far and the
// counters of the previous refresh (for rates), so each refresh does a
// bounded share of the work.
type Collector struct {
	rdb     redis.UniversalClient
	q       *delayq.Client
	list    *shardlist.Client
	chat    *chat.Client
	prefix  string
	cluster bool
	clock   func() time.Time
	lim     Limits
	trips   *tripCounter
	dlqs    bool // Options.DeadLetters
	noRates bool // Options.NoRates
	// minSample is the shortest time a rate is measured over: half the
	// refresh interval.
	minSample time.Duration

	queues scanSet    // from the registry
	kinds  []*kindSet // the other queue kinds' discovery
	// lastRows is each queue's row as last read, and sweep where the
	// next sweep of the queues not shown starts (pick).
	lastRows   map[string]QueueRow
	sweepAfter string
	lists      scanSet // from pkg/shardlist's Lists pages
	chats      scanSet // from pkg/chat's Chats pages

	// hello is HELLO's reply, asked once when INFO does not name the server.
	hello map[string]string

	prev     map[string]counters // queue -> counters at the last rate sample
	rates    map[string]*rateHistory
	chatData map[string]chatSample
	chatNext int // round-robin position over the sorted chats
}

type counters struct {
	sent, recv int64
	at         time.Time
}

// rateHistory is the last minute of a queue's rates, oldest first.
type rateHistory struct {
	samples []rateSample
}

type rateSample struct {
	at         time.Time
	push, recv float64
}

type chatSample struct {
	messages, lastID int64
	rate             float64
	at               time.Time
}

// scanSet is one incremental SCAN/SSCAN: a cursor that survives between
// refreshes and the members of the last complete cycle plus the current one.
type scanSet struct {
	valid    func(string) error // when set, the members it refuses are left out
	keep     func(string) bool  // the members it refuses are left out too
	cursor   uint64
	complete bool // a whole cycle has been seen
	known    map[string]bool
	cycle    map[string]bool
	refused  string // why the server refused the last step (ACL), or ""
	scanned  int64  // members returned in this cycle
	lastScan int64  // members returned in the last complete cycle
}

// add records members; those valid refuses (queue names written by
// something other than chatq or rsmq, which delayq would refuse) are left
// out.
func (s *scanSet) add(members []string) {
	if s.known == nil {
		s.known, s.cycle = map[string]bool{}, map[string]bool{}
	}
	for _, n := range members {
		if s.valid != nil && s.valid(n) != nil || !s.keep(n) {
			continue
		}
		s.known[n] = true
		s.cycle[n] = true
	}
	s.scanned += int64(len(members))
}

// endCycle ends a cycle: what it did not see is gone.
func (s *scanSet) endCycle() {
	s.known, s.cycle = s.cycle, map[string]bool{}
	if s.known == nil {
		s.known = map[string]bool{}
	}
	s.complete = true
	s.lastScan, s.scanned = s.scanned, 0
}

func (s *scanSet) reset() { s.cursor = 0 }

// seen is what the cycle under way has returned so far, or the last
// complete cycle when this one has just begun.
func (s *scanSet) seen() int64 {
	if s.complete && s.scanned == 0 {
		return s.lastScan
	}
	return s.scanned
}

func (s *scanSet) sorted() []string {
	out := make([]string, 0, len(s.known))
	for n := range s.known {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}

// New returns a Collector reading through rdb. It adds a hook to rdb that
// counts round trips (Snapshot.RoundTrips): snapshots are best taken
// one at a time, and nothing else should use rdb meanwhile.
func New(rdb redis.UniversalClient, opt Options) *Collector {
	clock := opt.Clock
	if clock == nil {
		clock = time.Now
	}
	trips := &tripCounter{}
	rdb.AddHook(trips)
	keep := opt.Filter.Match
	q := delayq.New(rdb, delayq.Options{Namespace: opt.Namespace, Prefix: opt.Prefix, HashTag: opt.Cluster})
	var kinds []*kindSet
	for _, k := range queuekinds.New(q, pqueues.Env{RDB: rdb, Prefix: opt.Prefix}).Kinds()[1:] {
		kinds = append(kinds, &kindSet{kind: k, set: scanSet{keep: keep}})
	}
	return &Collector{minSample: opt.Interval / 2, kinds: kinds,
		rdb: rdb, q: q,
		list:   shardlist.New(rdb, shardlist.Options{Prefix: opt.Prefix}),
		chat:   chat.New(rdb, chat.Options{Prefix: opt.Prefix}),
		prefix: opt.Prefix, cluster: opt.Cluster, clock: clock, lim: opt.Limits, trips: trips, dlqs: opt.DeadLetters,
		noRates: opt.NoRates,
		queues:  scanSet{valid: names.Queue, keep: keep},
		lists:   scanSet{keep: keep},
		chats:   scanSet{keep: keep},
		prev:    map[string]counters{}, rates: map[string]*rateHistory{}, chatData: map[string]chatSample{},
	}
}

// Snapshot is what one refresh saw. Its JSON is the contract of
// `chatq top --once -o json`.
type Snapshot struct {
	Time time.Time `json:"-"`
	// TimeMs is when the snapshot was taken (client clock), Unix ms.
	TimeMs int64      `json:"time"`
	Server ServerInfo `json:"server"`
	Queues []QueueRow `json:"queues"`
	// QueuesKnown is the number of queues in the registry (matching the
	// filter); only the first Limits.Queues of them are in Queues.
	QueuesKnown    int       `json:"queues_known"`
	QueuesComplete bool      `json:"queues_complete"`
	Lists          []ListRow `json:"lists"`
	ListsKnown     int       `json:"lists_known"`
	Chats          ChatsInfo `json:"chats"`
	// KeysComplete is true once a whole discovery cycle (the lists' SCAN,
	// then the chats') is done; KeysScanned counts the names it found in
	// the cycle under way (or in the last complete one).
	KeysComplete bool  `json:"keys_complete"`
	KeysScanned  int64 `json:"keys_scanned"`
	// ListsComplete and ChatsComplete are each discovery's own: a whole
	// cycle of it is done (false when that kind is left out).
	ListsComplete bool `json:"lists_complete"`
	ChatsComplete bool `json:"chats_complete"`
	// ListsRefused and ChatsRefused say why the server refused their
	// discovery (a user without SCAN), or are "".
	ListsRefused string `json:"lists_refused,omitempty"`
	ChatsRefused string `json:"chats_refused,omitempty"`
	// Calls counts the server calls the snapshot made (a script call
	// counts once) and RoundTrips the round trips they took (a pipeline
	// counts once, on a Cluster once whatever masters it reaches).
	Calls      int        `json:"calls"`
	RoundTrips int        `json:"round_trips"`
	Peek       []PeekRow  `json:"-"`
	PeekQueue  string     `json:"-"`
	Limits     limitsJSON `json:"limits"`
}

type limitsJSON struct {
	Queues int `json:"queues"`
	Lists  int `json:"lists"`
	Chats  int `json:"chats"`
}

// ServerInfo is the server's side of a snapshot.
type ServerInfo struct {
	Server     string  `json:"server"` // "redis", "valkey", "miniredis" (the embedded server)
	Version    string  `json:"version"`
	Mode       string  `json:"mode"`
	Role       string  `json:"role"`
	UsedMemory int64   `json:"used_memory"`
	Clients    int64   `json:"connected_clients"`
	RTTMs      float64 `json:"rtt_ms"`
	// NoInfo: this user may not run INFO (or the server lacks it), so
	// used_memory and connected_clients are unknown (0).
	NoInfo bool `json:"no_info,omitempty"`
}

// QueueRow is one queue's numbers.
type QueueRow struct {
	Name string `json:"name"`
	// Kind is the queue's kind: "rsmq", "bullmq", "asynq", "stream".
	Kind     string `json:"kind"`
	Messages int64  `json:"messages"`
	Ready    int64  `json:"ready"`
	Delayed  int64  `json:"delayed"`
	InFlight int64  `json:"inflight"`
	// DeadLetter is the dead-letter queue ("" when none) and
	// DeadLetterDepth its messages (nil when it was not examined).
	DeadLetter      string `json:"dead_letter"`
	DeadLetterDepth *int64 `json:"dead_letter_depth"`
	// OldestReadyMs is how long the first ready message has been due, in
	// ms; nil (null) when none is ready, as in queue stats.
	OldestReadyMs *int64 `json:"oldest_ready_ms"`
	TotalSent     int64  `json:"totalsent"`
	TotalRecv     int64  `json:"totalrecv"`
	// TotalDead counts the messages moved to the dead-letter queue.
	TotalDead int64 `json:"totaldead"`
	// PushRate and RecvRate are per second since the previous refresh,
	// nil before there is one.
	PushRate *float64 `json:"push_rate"`
	RecvRate *float64 `json:"recv_rate"`
	// PushHistory and RecvHistory are the rates of the last minute, oldest
	// first.
	PushHistory []float64 `json:"-"`
	RecvHistory []float64 `json:"-"`
	Error       string    `json:"error,omitempty"`
	// Retry, Dead and Done count the jobs in those states, Paused says
	// whether the queue is paused: null for a kind without the state
	// (RSMQ's: its dead letters are a queue of their own). Delayed and
	// InFlight are 0 for a kind without them.
	Retry  *int64 `json:"retry"`
	Dead   *int64 `json:"dead"`
	Done   *int64 `json:"done"`
	Paused *bool  `json:"paused"`
	// ServerNow is the server's time the numbers were read at.
	ServerNow time.Time `json:"-"`
}

// OldestMs is OldestReadyMs, 0 when no message is ready.
func (r *QueueRow) OldestMs() int64 {
	if r.OldestReadyMs == nil {
		return 0
	}
	return *r.OldestReadyMs
}

// ListRow is one sharded list.
type ListRow struct {
	Key    string `json:"key"`
	Length int64  `json:"length"`
	Shards int64  `json:"shards"`
	Error  string `json:"error,omitempty"`
}

// ChatsInfo sums up the chats.
type ChatsInfo struct {
	// Count is the number of chats seen; exact when the key scan is
	// complete.
	Count int `json:"count"`
	// Messages is the sum of the stored messages of the chats examined so
	// far (Examined of Count).
	Messages int64     `json:"messages"`
	Examined int       `json:"examined"`
	Busiest  []ChatRow `json:"busiest"`
}

// ChatRow is one chat among the busiest.
type ChatRow struct {
	ID       string   `json:"chat_id"`
	Messages int64    `json:"messages"`
	LastID   int64    `json:"last_id"`
	Rate     *float64 `json:"send_rate"`
}

// PeekRow is a message of the queue view.
type PeekRow struct {
	ID        string
	State     string
	VisibleAt time.Time
	RC        int64
	Body      string
}

// Snapshot takes one snapshot: the server, discovery (bounded SCAN steps),
// then the numbers of at most the limits' queues, lists and chats whose
// names contain filter. peekQueue, when not "", also peeks at up to peekN
// of its messages. This is the one place chatq top and chatq metrics read from Redis.
func (c *Collector) Snapshot(ctx context.Context, filter, peekQueue string, peekN int) (*Snapshot, error) {
	now := c.clock()
	trips := c.trips.n.Load()
	s := &Snapshot{Time: now, TimeMs: now.UnixMilli(), Limits: limitsJSON{c.lim.Queues, c.lim.Lists, c.lim.Chats}}
	calls := 0
	fail := func(err error) (*Snapshot, error) {
		// After a failure (a restart, a failover) the cursors may mean
		// nothing to the server that answers next: start the scans again.
		c.queues.reset()
		for _, ks := range c.kinds {
			ks.set.reset()
		}
		c.lists.reset()
		c.chats.reset()
		if cc, ok := c.rdb.(*redis.ClusterClient); ok {
			cc.ReloadState(ctx) // after a failover, find the new masters
		}
		return nil, err
	}

	// The server: one INFO (default sections) and one timed PING.
	info, err := c.rdb.Info(ctx).Result()
	calls++
	// A least-privilege user (chatq acl) may not run INFO, and some
	// servers lack it: the server's line then says less.
	noInfo := conn.PermissionDenied(err) || conn.UnknownCommand(err)
	if err != nil && !noInfo {
		return fail(err)
	}
	start := time.Now()
	if err := c.rdb.Ping(ctx).Err(); err != nil {
		return fail(err)
	}
	rtt := time.Since(start)
	calls++
	s.Server = parseInfo(info, c.cluster)
	s.Server.RTTMs = float64(rtt.Microseconds()) / 1000
	s.Server.NoInfo = noInfo
	if s.Server.Server == "" {
		// The embedded server's INFO does not name it, nor does a refused
		// INFO: HELLO does, once (a server without HELLO stays unnamed).
		if c.hello == nil {
			hello, _ := c.rdb.Do(ctx, "hello", "3").Result()
			calls++
			c.hello = conn.HelloFields(hello)
		}
		s.Server.Server, s.Server.Version = c.hello["server"], cmp.Or(c.hello["version"], s.Server.Version)
		if noInfo {
			if m := c.hello["mode"]; m != "" && !c.cluster {
				s.Server.Mode = m
			}
			s.Server.Role = c.hello["role"]
		}
	}

	// Discovery.
	n, err := c.scanRegistry(ctx)
	calls += n
	if err != nil {
		return fail(err)
	}
	n, err = c.discoverKinds(ctx)
	calls += n
	if err != nil {
		return fail(err)
	}
	if c.lim.Lists > 0 {
		n, err = c.discover(ctx, &c.lists, c.list.Lists)
		calls += n
		if err != nil {
			return fail(err)
		}
	}
	if c.lim.Chats > 0 {
		n, err = c.discover(ctx, &c.chats, c.chat.Chats)
		calls += n
		if err != nil {
			return fail(err)
		}
	}
	for id := range c.chatData {
		if !c.chats.known[id] {
			delete(c.chatData, id) // gone at the end of a cycle
		}
	}
	s.QueuesComplete = c.queues.complete
	for _, ks := range c.kinds {
		s.QueuesComplete = s.QueuesComplete && ks.set.complete
	}
	s.ListsComplete, s.ChatsComplete = c.lists.complete, c.chats.complete
	s.ListsRefused, s.ChatsRefused = c.lists.refused, c.chats.refused
	s.KeysComplete = (c.lim.Lists == 0 || c.lists.complete) && (c.lim.Chats == 0 || c.chats.complete)
	s.KeysScanned = c.lists.seen() + c.chats.seen()

	// Queues.
	all := c.queues.sorted()
	for _, ks := range c.kinds {
		all = append(all, ks.set.sorted()...)
	}
	c.forgetGone(all)
	queues := matching(all, filter)
	s.QueuesKnown = len(queues)
	rows, n, err := c.readQueues(ctx, c.pick(queues), len(queues), s.Time)
	calls += n
	if err != nil {
		return fail(err)
	}
	s.Queues = rows

	// Sharded lists.
	lists := matching(c.lists.sorted(), filter)
	s.ListsKnown = len(lists)
	lists = lists[:min(len(lists), c.lim.Lists)]
	lrows, n, err := c.listRows(ctx, lists)
	calls += n
	if err != nil {
		return fail(err)
	}
	s.Lists = lrows

	// Chats.
	ci, n, err := c.chatsInfo(ctx, filter, s.Time)
	calls += n
	if err != nil {
		return fail(err)
	}
	s.Chats = ci

	if ks := c.kindOf(peekQueue); ks != nil && peekN > 0 {
		rows, err := c.kindPeek(ctx, ks, peekQueue, min(peekN, MaxPeek))
		calls++
		if err != nil {
			return fail(err)
		}
		s.PeekQueue, s.Peek = peekQueue, rows
	} else if peekQueue != "" && peekN > 0 {
		ps, err := c.q.Peek(ctx, peekQueue, delayq.PeekOptions{N: min(peekN, MaxPeek)})
		calls++
		if err != nil && !errors.Is(err, delayq.ErrQueueNotFound) {
			return fail(err)
		}
		s.PeekQueue = peekQueue
		for _, p := range ps {
			s.Peek = append(s.Peek, PeekRow{ID: p.ID, State: p.State, VisibleAt: p.VisibleAt, RC: p.RC, Body: p.Body})
		}
	}
	s.Calls = calls
	s.RoundTrips = int(c.trips.n.Load() - trips)
	return s, nil
}

// scanRegistry reads the next steps of the queue registry.
func (c *Collector) scanRegistry(ctx context.Context) (int, error) {
	calls := 0
	for calls < c.lim.RegistryCalls {
		page, next, err := c.q.Queues(ctx, c.queues.cursor, "", c.lim.ScanCount)
		calls++
		if err != nil {
			return calls, err
		}
		c.queues.add(page)
		c.queues.cursor = next
		if next == 0 {
			c.queues.endCycle() // the next refresh starts a new cycle
			break
		}
	}
	return calls, nil
}

// discover takes the next steps of a listing of lists or chats, each one
// SCAN of the prefix's keys (node by node on a cluster), at most
// Limits.ScanCalls of them.
func (c *Collector) discover(ctx context.Context, set *scanSet, page func(context.Context, uint64, string, int64) ([]string, uint64, error)) (int, error) {
	return c.discoverN(ctx, set, c.lim.ScanCalls, page)
}

// discoverN is discover with at most limit calls.
func (c *Collector) discoverN(ctx context.Context, set *scanSet, limit int, page func(context.Context, uint64, string, int64) ([]string, uint64, error)) (int, error) {
	calls := 0
	for calls < limit {
		found, next, err := page(ctx, set.cursor, "", c.lim.ScanCount)
		calls++
		if conn.PermissionDenied(err) || conn.UnknownCommand(err) {
			// A user without SCAN (chatq acl leaves it out), or a server
			// without it (some proxies), finds no
			// lists or chats; the rest of the snapshot goes on.
			set.refused = err.Error()
			return calls, nil
		}
		if err != nil {
			return calls, err
		}
		set.refused = ""
		set.add(found)
		set.cursor = next
		if next == 0 {
			set.endCycle() // the next refresh starts a new cycle
			break
		}
	}
	return calls, nil
}

// queueRows reads the stats of names (counts, counters and the oldest
// ready age: one O(log n) script call each, 20 a round trip, and an
// HEXISTS of each dead-letter queue not among names, in one pipeline) and
// the depth of their dead-letter queues: of those among names, and with
// Options.DeadLetters of the others, read after.
func (c *Collector) queueRows(ctx context.Context, names []string, now time.Time) ([]QueueRow, int, error) {
	stats, err := c.q.StatsEach(ctx, names)
	calls := len(names)
	if err != nil {
		return nil, calls, err
	}
	depth := map[string]int64{}
	for _, st := range stats {
		if st.Err == nil {
			depth[st.Name] = st.Messages
		}
	}
	var more []string // dead-letter queues not among names
	for _, st := range stats {
		if _, ok := depth[st.DeadLetter]; st.Err == nil && st.DeadLetter != "" && !ok && !slices.Contains(more, st.DeadLetter) {
			more = append(more, st.DeadLetter)
		}
	}
	calls += len(more) // StatsEach's HEXISTS of each
	var exist []string
	for _, st := range stats {
		if st.Err == nil && st.DeadLetter != "" && !st.DeadLetterMissing && slices.Contains(more, st.DeadLetter) && !slices.Contains(exist, st.DeadLetter) {
			exist = append(exist, st.DeadLetter)
		}
	}
	if len(exist) > 0 && c.dlqs {
		dl, err := c.q.StatsEach(ctx, exist)
		calls += len(exist)
		if err != nil {
			return nil, calls, err
		}
		for _, st := range dl {
			if st.Err == nil {
				depth[st.Name] = st.Messages
			}
		}
	}
	rows := make([]QueueRow, len(stats))
	for i, st := range stats {
		r := &rows[i]
		*r = queueRow(st)
		if d, ok := depth[r.DeadLetter]; ok {
			r.DeadLetterDepth = &d
		}
		if r.Error == "" && !c.noRates {
			c.rate(r, now)
		}
	}
	// Forget the counters of queues no longer shown.
	shown := map[string]bool{}
	for _, n := range names {
		shown[n] = true
	}
	for n := range c.prev {
		if !shown[n] {
			delete(c.prev, n)
			delete(c.rates, n)
		}
	}
	return rows, calls, nil
}

// queueRow is one queue's row from its stats; a failure about the queue
// (deleted, a key of the wrong type) is kept in the row.
func queueRow(st delayq.Stats) QueueRow {
	r := QueueRow{Name: st.Name, Kind: "rsmq"}
	switch {
	case errors.Is(st.Err, delayq.ErrQueueNotFound):
		r.Error = "deleted"
		return r
	case st.Err != nil:
		r.Error = st.Err.Error()
		return r
	}
	r.Messages, r.Ready, r.Delayed, r.InFlight = st.Messages, st.Ready, st.Delayed, st.InFlight
	r.DeadLetter, r.TotalSent, r.TotalRecv, r.TotalDead = st.DeadLetter, st.TotalSent, st.TotalRecv, st.TotalDead
	r.ServerNow = st.Now
	// How long the oldest ready message has been due: stats reads it in
	// the same O(log n) call.
	if st.OldestReady != nil {
		ms := st.OldestReadyAge.Milliseconds()
		r.OldestReadyMs = &ms
	}
	return r
}

// rate sets r's rates from the counters' change since the previous
// sample, and keeps the last minute of them. Refreshes closer than
// minSample to the last sample (a key asked for one) reuse its rates.
func (c *Collector) rate(r *QueueRow, now time.Time) {
	h := c.rates[r.Name]
	if h == nil {
		h = &rateHistory{}
		c.rates[r.Name] = h
	}
	p, ok := c.prev[r.Name]
	dt := now.Sub(p.at)
	switch {
	case ok && dt < c.minSample && r.TotalSent >= p.sent && r.TotalRecv >= p.recv:
		// Too soon for a new sample: keep the last one.
	case ok && dt > 0 && r.TotalSent >= p.sent && r.TotalRecv >= p.recv:
		sec := dt.Seconds()
		h.add(now, round3(float64(r.TotalSent-p.sent)/sec), round3(float64(r.TotalRecv-p.recv)/sec))
		c.prev[r.Name] = counters{r.TotalSent, r.TotalRecv, now}
	default:
		// The first sight, or a counter that went down (the queue was
		// recreated, the server lost data in a restart): no rate yet.
		*h = rateHistory{}
		c.prev[r.Name] = counters{r.TotalSent, r.TotalRecv, now}
	}
	if n := len(h.samples); n > 0 {
		last := h.samples[n-1]
		r.PushRate, r.RecvRate = &last.push, &last.recv
	}
	for _, sm := range h.samples {
		r.PushHistory = append(r.PushHistory, sm.push)
		r.RecvHistory = append(r.RecvHistory, sm.recv)
	}
}

// round3 rounds a rate to thousandths, enough for people and scripts.
func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// add keeps a sample and drops those older than a minute.
func (h *rateHistory) add(at time.Time, push, recv float64) {
	h.samples = append(h.samples, rateSample{at, push, recv})
	i := 0
	for i < len(h.samples) && at.Sub(h.samples[i].at) >= time.Minute {
		i++
	}
	h.samples = h.samples[i:]
}

// listRows reads the length and end shards of each list: one O(1) script
// call each.
func (c *Collector) listRows(ctx context.Context, keys []string) ([]ListRow, int, error) {
	rows := make([]ListRow, 0, len(keys))
	calls := 0
	for _, k := range keys {
		r := ListRow{Key: k}
		in, err := c.list.Info(ctx, k)
		calls++
		if errors.Is(err, shardlist.ErrInvalid) {
			continue // not a name chatq would make
		}
		if err != nil {
			if ctx.Err() != nil || isConnErr(err) {
				return nil, calls, err
			}
			r.Error = err.Error()
			rows = append(rows, r)
			continue
		}
		r.Length, r.Shards = in.Length, in.Shards
		rows = append(rows, r)
	}
	return rows, calls, nil
}

// chatsInfo examines the next Limits.Chats chats in turn (their stored
// messages and last id, in one round trip) and sums up what is known.
func (c *Collector) chatsInfo(ctx context.Context, filter string, now time.Time) (ChatsInfo, int, error) {
	ids := matching(c.chats.sorted(), filter)
	ci := ChatsInfo{Count: len(ids), Busiest: []ChatRow{}}
	if len(ids) == 0 {
		return ci, 0, nil
	}
	n := min(len(ids), c.lim.Chats)
	if c.chatNext >= len(ids) {
		c.chatNext = 0
	}
	batch := make([]string, 0, n)
	for i := 0; i < n; i++ {
		batch = append(batch, ids[(c.chatNext+i)%len(ids)])
	}
	c.chatNext = (c.chatNext + n) % len(ids)
	stats, err := c.chat.Stats(ctx, batch...)
	if err != nil {
		return ci, 1, err
	}
	for _, st := range stats {
		id, last := st.ChatID, st.LastID
		sm := chatSample{messages: st.Messages, lastID: last, rate: -1, at: now}
		if old, ok := c.chatData[id]; ok && last >= old.lastID {
			switch dt := now.Sub(old.at); {
			case dt < c.minSample:
				// Too soon for a new sample: keep the last one.
				sm.rate, sm.lastID, sm.at = old.rate, old.lastID, old.at
			default:
				sm.rate = round3(float64(last-old.lastID) / dt.Seconds())
			}
		}
		c.chatData[id] = sm
	}
	var rows []ChatRow
	for _, id := range ids {
		sm, ok := c.chatData[id]
		if !ok {
			continue
		}
		ci.Examined++
		ci.Messages += sm.messages
		row := ChatRow{ID: id, Messages: sm.messages, LastID: sm.lastID}
		if sm.rate >= 0 {
			r := sm.rate
			row.Rate = &r
		}
		rows = append(rows, row)
	}
	// Busiest: most messages sent lately, then most stored.
	sort.SliceStable(rows, func(i, j int) bool {
		ri, rj := rateOf(rows[i]), rateOf(rows[j])
		if ri != rj {
			return ri > rj
		}
		if rows[i].Messages != rows[j].Messages {
			return rows[i].Messages > rows[j].Messages
		}
		return rows[i].ID < rows[j].ID
	})
	ci.Busiest = rows[:min(len(rows), 5)]
	return ci, 1, nil
}

func rateOf(r ChatRow) float64 {
	if r.Rate == nil {
		return 0
	}
	return *r.Rate
}

// matching returns the names that contain filter, ignoring case.
func matching(names []string, filter string) []string {
	if filter == "" {
		return names
	}
	out := names[:0:0]
	for _, n := range names {
		if strings.Contains(strings.ToLower(n), strings.ToLower(filter)) {
			out = append(out, n)
		}
	}
	return out
}

// parseInfo reads what top shows from an INFO reply. The embedded server
// has no server or memory section: those stay empty (the collector asks
// HELLO for its name), "unknown" or 0.
func parseInfo(info string, cluster bool) ServerInfo {
	f := conn.InfoFields(info)
	s := ServerInfo{Version: "unknown", Mode: "standalone", Role: f["role"]}
	if cluster {
		s.Mode = "cluster"
	}
	if name, v := conn.ServerIdentity(f); name != "" {
		s.Server, s.Version = name, v
	}
	if m := f["redis_mode"]; m != "" {
		s.Mode = m
	}
	s.UsedMemory, _ = strconv.ParseInt(f["used_memory"], 10, 64)
	s.Clients, _ = strconv.ParseInt(f["connected_clients"], 10, 64)
	return s
}

// isConnErr reports whether err is about reaching the server (a lost
// connection, a timeout, a failover under way) rather than a reply about
// one key: the refresh fails and the view says "reconnecting".
func isConnErr(err error) bool { return conn.Transient(err) }
