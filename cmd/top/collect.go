package top

import (
	"context"
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/names"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

// Limits bound the work of one refresh, whatever the number of keys.
type Limits struct {
	Queues int // queues examined (stats) per refresh
	Lists  int // sharded lists examined per refresh
	Chats  int // chats examined per refresh, in turn
	// ScanCalls SCANs of COUNT ScanCount per refresh discover lists, and
	// as many chats; RegistryCalls SSCANs of COUNT ScanCount read the queue
	// registry.
	ScanCalls     int
	RegistryCalls int
	ScanCount     int64
}

// DefaultLimits are the limits of `chatq top` unless flags change them.
var DefaultLimits = Limits{Queues: 30, Lists: 20, Chats: 50, ScanCalls: 4, RegistryCalls: 2, ScanCount: 500}

// maxPeek is the most messages the queue view asks for.
const maxPeek = 50

// collector takes snapshots. It keeps what discovery found so far and the
// counters of the previous refresh (for rates), so each refresh does a
// bounded share of the work.
type collector struct {
	rdb     redis.UniversalClient
	q       *delayq.Client
	list    *shardlist.Client
	chat    *chat.Client
	prefix  string
	cluster bool
	clock   func() time.Time
	lim     Limits
	// minSample is the shortest time a rate is measured over: half the
	// refresh interval.
	minSample time.Duration

	queues scanSet // from the registry
	lists  scanSet // from pkg/shardlist's Lists pages
	chats  scanSet // from pkg/chat's Chats pages

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
	cursor   uint64
	complete bool // a whole cycle has been seen
	known    map[string]bool
	cycle    map[string]bool
	scanned  int64 // members returned in this cycle
	lastScan int64 // members returned in the last complete cycle
}

// add records members; those valid refuses (queue names written by
// something other than chatq or rsmq, which delayq would refuse) are left
// out.
func (s *scanSet) add(members []string) {
	if s.known == nil {
		s.known, s.cycle = map[string]bool{}, map[string]bool{}
	}
	for _, n := range members {
		if s.valid != nil && s.valid(n) != nil {
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

func newCollector(rdb redis.UniversalClient, ns, prefix string, cluster bool, lim Limits, interval time.Duration, clock func() time.Time) *collector {
	return &collector{minSample: interval / 2,
		rdb: rdb, q: delayq.New(rdb, delayq.Options{Namespace: ns, Prefix: prefix, HashTag: cluster}),
		list:   shardlist.New(rdb, shardlist.Options{Prefix: prefix}),
		chat:   chat.New(rdb, chat.Options{Prefix: prefix}),
		prefix: prefix, cluster: cluster, clock: clock, lim: lim,
		queues: scanSet{valid: names.Queue},
		prev:   map[string]counters{}, rates: map[string]*rateHistory{}, chatData: map[string]chatSample{},
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
	KeysComplete bool       `json:"keys_complete"`
	KeysScanned  int64      `json:"keys_scanned"`
	Calls        int        `json:"calls"`
	Peek         []PeekRow  `json:"-"`
	PeekQueue    string     `json:"-"`
	Limits       limitsJSON `json:"limits"`
}

type limitsJSON struct {
	Queues int `json:"queues"`
	Lists  int `json:"lists"`
	Chats  int `json:"chats"`
}

// ServerInfo is the server's side of a snapshot.
type ServerInfo struct {
	Version    string  `json:"version"`
	Mode       string  `json:"mode"`
	Role       string  `json:"role"`
	UsedMemory int64   `json:"used_memory"`
	Clients    int64   `json:"connected_clients"`
	RTTMs      float64 `json:"rtt_ms"`
}

// QueueRow is one queue's numbers.
type QueueRow struct {
	Name     string `json:"name"`
	Messages int64  `json:"messages"`
	Ready    int64  `json:"ready"`
	Delayed  int64  `json:"delayed"`
	InFlight int64  `json:"inflight"`
	// DeadLetter is the dead-letter queue ("" when none) and
	// DeadLetterDepth its messages (nil when it was not examined).
	DeadLetter      string `json:"dead_letter"`
	DeadLetterDepth *int64 `json:"dead_letter_depth"`
	// OldestReadyMs is how long the first ready message has been due, in
	// ms (0 when none is ready).
	OldestReadyMs int64 `json:"oldest_ready_ms"`
	TotalSent     int64 `json:"totalsent"`
	TotalRecv     int64 `json:"totalrecv"`
	// PushRate and RecvRate are per second since the previous refresh,
	// nil before there is one.
	PushRate *float64 `json:"push_rate"`
	RecvRate *float64 `json:"recv_rate"`
	// PushHistory and RecvHistory are the rates of the last minute, oldest
	// first.
	PushHistory []float64 `json:"-"`
	RecvHistory []float64 `json:"-"`
	Error       string    `json:"error,omitempty"`
	// serverNow is the server's time the numbers were read at.
	serverNow time.Time
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

// snapshot takes one snapshot: the server, discovery (bounded SCAN steps),
// then the numbers of at most the limits' queues, lists and chats whose
// names contain filter. peekQueue, when not "", also peeks at up to peekN
// of its messages. This is the one place chatq top reads from Redis.
func (c *collector) snapshot(ctx context.Context, filter, peekQueue string, peekN int) (*Snapshot, error) {
	now := c.clock()
	s := &Snapshot{Time: now, TimeMs: now.UnixMilli(), Limits: limitsJSON{c.lim.Queues, c.lim.Lists, c.lim.Chats}}
	calls := 0
	fail := func(err error) (*Snapshot, error) {
		// After a failure (a restart, a failover) the cursors may mean
		// nothing to the server that answers next: start the scans again.
		c.queues.reset()
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
	if err != nil {
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

	// Discovery.
	n, err := c.scanRegistry(ctx)
	calls += n
	if err != nil {
		return fail(err)
	}
	n, err = c.discover(ctx, &c.lists, c.list.Lists)
	calls += n
	if err != nil {
		return fail(err)
	}
	n, err = c.discover(ctx, &c.chats, c.chat.Chats)
	calls += n
	if err != nil {
		return fail(err)
	}
	for id := range c.chatData {
		if !c.chats.known[id] {
			delete(c.chatData, id) // gone at the end of a cycle
		}
	}
	s.QueuesComplete = c.queues.complete
	s.KeysComplete = c.lists.complete && c.chats.complete
	s.KeysScanned = c.lists.seen() + c.chats.seen()

	// Queues.
	queues := matching(c.queues.sorted(), filter)
	s.QueuesKnown = len(queues)
	queues = queues[:min(len(queues), c.lim.Queues)]
	rows, n, err := c.queueRows(ctx, queues, s.Time)
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

	if peekQueue != "" && peekN > 0 {
		ps, err := c.q.Peek(ctx, peekQueue, delayq.PeekOptions{N: min(peekN, maxPeek)})
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
	return s, nil
}

// scanRegistry reads the next steps of the queue registry.
func (c *collector) scanRegistry(ctx context.Context) (int, error) {
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
func (c *collector) discover(ctx context.Context, set *scanSet, page func(context.Context, uint64, string, int64) ([]string, uint64, error)) (int, error) {
	calls := 0
	for calls < c.lim.ScanCalls {
		found, next, err := page(ctx, set.cursor, "", c.lim.ScanCount)
		calls++
		if err != nil {
			return calls, err
		}
		set.add(found)
		set.cursor = next
		if next == 0 {
			set.endCycle() // the next refresh starts a new cycle
			break
		}
	}
	return calls, nil
}

// queueRows reads the stats of names (counts and the oldest ready age,
// one O(log n) script call each), four queues at a time.
func (c *collector) queueRows(ctx context.Context, names []string, now time.Time) ([]QueueRow, int, error) {
	rows := make([]QueueRow, len(names))
	callsPer := make([]int, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i, name := range names {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			rows[i], callsPer[i], errs[i] = c.queueRow(ctx, name)
		}()
	}
	wg.Wait()
	calls := 0
	for i := range rows {
		calls += callsPer[i]
	}
	for _, err := range errs {
		if err != nil {
			return nil, calls, err
		}
	}
	depth := map[string]int64{}
	for i := range rows {
		if rows[i].Error == "" {
			depth[rows[i].Name] = rows[i].Messages
		}
	}
	for i := range rows {
		r := &rows[i]
		if d, ok := depth[r.DeadLetter]; ok {
			r.DeadLetterDepth = &d
		}
		if r.Error != "" {
			continue
		}
		c.rate(r, now)
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

// statsCall is the per-queue numbers call.
func (c *collector) statsCall(ctx context.Context, name string) (*delayq.Stats, error) {
	return c.q.Stats(ctx, name)
}

// queueRow reads one queue; a failure that is about the queue (deleted, a
// wrong type) is kept in the row, one about the connection returned.
func (c *collector) queueRow(ctx context.Context, name string) (QueueRow, int, error) {
	r := QueueRow{Name: name}
	st, err := c.statsCall(ctx, name)
	switch {
	case errors.Is(err, delayq.ErrQueueNotFound):
		r.Error = "deleted"
		return r, 1, nil
	case err != nil && (ctx.Err() != nil || isConnErr(err)):
		return r, 1, err
	case err != nil:
		r.Error = err.Error()
		return r, 1, nil
	}
	r.Messages, r.Ready, r.Delayed, r.InFlight = st.Messages, st.Ready, st.Delayed, st.InFlight
	r.DeadLetter, r.TotalSent, r.TotalRecv = st.DeadLetter, st.TotalSent, st.TotalRecv
	r.serverNow = st.Now
	// How long the oldest ready message has been due: stats reads it in
	// the same O(log n) call.
	if st.OldestReady != nil {
		r.OldestReadyMs = st.OldestReadyAge.Milliseconds()
	}
	if st.DeadLetter != "" {
		return r, 2, nil // and the HEXISTS of the dead-letter queue
	}
	return r, 1, nil
}

// rate sets r's rates from the counters' change since the previous
// sample, and keeps the last minute of them. Refreshes closer than
// minSample to the last sample (a key asked for one) reuse its rates.
func (c *collector) rate(r *QueueRow, now time.Time) {
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
func (c *collector) listRows(ctx context.Context, keys []string) ([]ListRow, int, error) {
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
func (c *collector) chatsInfo(ctx context.Context, filter string, now time.Time) (ChatsInfo, int, error) {
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
// has no server or memory section: those stay "unknown" or 0.
func parseInfo(info string, cluster bool) ServerInfo {
	f := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			f[k] = v
		}
	}
	s := ServerInfo{Version: "unknown", Mode: "standalone", Role: f["role"]}
	if cluster {
		s.Mode = "cluster"
	}
	if v := f["redis_version"]; v != "" {
		s.Version = v
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
