package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// TestSoak is scripts/soak.sh: for CHATQ_SOAK (a duration), chatq processes
// produce and consume the three patterns on a Redis Cluster of three
// masters with a replica each, every node behind a fault proxy, while a
// fault is injected every 1.5-4 s, at random: a node restarted (its
// append-only file keeps what it acknowledged), a replica promoted (CLUSTER
// FAILOVER), every client of a master killed (CLIENT KILL), a master's next
// reply dropped or its clients blackholed for up to 3 s (the proxy), a
// `queue work` SIGKILLed, a pattern's slot moved to another master key by
// key. Then the producers stop and everything sent must arrive.
//
// The producers are loops of `chat send`, `queue push` and `list rpush`;
// the consumers `chat watch --mark`, two `queue work --concurrency 2`
// (restarted when killed) and two loops of `list blpop`. A send that exits
// 4 (its reply lost) may or may not have been stored, and a pop that exits
// 4 may have taken an item: those are counted apart, and never as lost.
//
// It fails when a message sent is lost (a job: never handled, or left in
// the queue), delivered more often than at-least-once allows (a chat
// message printed twice, a job acked twice,
// an item popped twice), delivered without being sent, or a long-running
// command exits unless killed by the soak. It reports the counts, every
// exit code, the faults and the longest stall (time with messages
// outstanding and none delivered) of each pattern; CHATQ_SOAK_REPORT names
// a file for the report as JSON. Pass and fail depend on counts only, never
// on how long anything took.
func TestSoak(t *testing.T) {
	d := os.Getenv("CHATQ_SOAK")
	if d == "" {
		t.Skip("CHATQ_SOAK (a duration) not set: run scripts/soak.sh DURATION")
	}
	dur, err := time.ParseDuration(d)
	if err != nil || dur <= 0 {
		t.Fatalf("CHATQ_SOAK=%q: want a duration such as 60s or 10m", d)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CHATQ_SOAK_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("soak of %s, seed %d (CHATQ_SOAK_SEED to repeat the faults' choices)", dur, seed)
	rng := rand.New(rand.NewPCG(seed, seed))

	// A restart must not turn into a failover (which would lose what the
	// replica had not yet received: Redis's, not chatq's): the node
	// timeout is longer than a restart takes. Promotions are CLUSTER
	// FAILOVER, which loses nothing.
	c := redistest.StartClusterWith(t, redistest.ClusterOptions{Masters: 3, Replicas: 1, Proxied: true, NodeTimeout: 5 * time.Second})
	s := &soak{t: t, env: chatqEnv(t, "CHATQ_URL="+c.URL(), "CHATQ_CLUSTER=true", "CHATQ_PREFIX=s:"),
		exits: map[string]map[int]int{}, samples: map[string][]string{}, causes: map[string]map[string]int{}, faults: map[string]int{}, dir: t.TempDir(),
		chat: newFlow(), queue: newFlow(), list: newFlow()}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	mustRun(t, s.env, "queue", "create", "jobs", "--vt", "5s")
	mustRun(t, s.env, "chat", "create", "--from", "joe", "--to", "jeff", "--id", "room")

	// Consumers.
	handler := `printf '%s %s\n' "$CHATQ_MESSAGE_ID" "$(cat)" >> ` + filepath.Join(s.dir, "bodies")
	s.supervise(ctx, "chat watch", []string{"-o", "json", "chat", "watch", "jeff", "--mark", "--poll", "1s"})
	for range 2 {
		s.supervise(ctx, "queue work", []string{"-o", "json", "queue", "work", "jobs", "--concurrency", "2", "--", "sh", "-c", handler})
	}
	for range 2 {
		s.popLoop(ctx)
	}
	// Producers.
	var producing atomic.Bool
	producing.Store(true)
	var producers sync.WaitGroup
	for _, p := range []struct {
		kind string
		f    *flow
		args func(body string) []string
	}{
		{"chat send", s.chat, func(b string) []string { return []string{"chat", "send", "room", "--from", "joe", b} }},
		{"queue push", s.queue, func(b string) []string { return []string{"queue", "push", "jobs", b} }},
		{"list rpush", s.list, func(b string) []string { return []string{"list", "rpush", "items", b} }},
	} {
		producers.Add(1)
		go func() {
			defer producers.Done()
			for i := 0; producing.Load(); i++ {
				body := p.kind[:1] + strconv.Itoa(i)
				r := runOnce(ctx, s.env, p.args(body)...)
				s.exit(p.kind, r.code, r.stderr)
				switch r.code {
				case 0:
					p.f.send(body)
				case 4:
					p.f.maybeSend(body)
				}
			}
		}()
	}
	stopMonitor := s.monitor()

	// Faults, one at a time, each undone before the next.
	slots := map[string]int{}
	for name, key := range map[string]string{"chat": "s:chat:{room}", "queue": "s:rsmq:{jobs}", "list": "s:{items}:first"} {
		if slots[name], err = c.Slot(ctx, key); err != nil {
			t.Fatal(err)
		}
	}
	end := time.Now().Add(dur)
	for time.Now().Before(end) {
		time.Sleep(time.Duration(1500+rng.IntN(2500)) * time.Millisecond)
		s.fault(ctx, c, rng, slots)
		c.WaitHealthy(t)
	}

	// Drain: no more sends; everything sent arrives.
	producing.Store(false)
	producers.Wait()
	if !waitUntil(3*time.Minute, s.drained) {
		t.Errorf("not everything sent arrived within 3 minutes after the faults stopped")
	}
	s.stop()
	stopMonitor()
	s.report(t)
}

// soak is the state of one soak run.
type soak struct {
	t   *testing.T
	env []string
	dir string

	mu         sync.Mutex
	exits      map[string]map[int]int    // command -> exit code -> how many
	samples    map[string][]string       // "command exit N" -> the first stderrs
	causes     map[string]map[string]int // "command exit N" -> cause (see cause) -> count
	faults     map[string]int
	unexpected []string // long-running commands that ended on their own
	procs      []*supervised
	stopping   atomic.Bool
	loops      sync.WaitGroup

	chat, queue, list *flow
}

// flow counts one pattern's messages by body.
type flow struct {
	mu        sync.Mutex
	sent      map[string]bool // the send exited 0
	maybe     map[string]bool // the send exited 4: stored or not
	delivered map[string]int
	taken     int // pops that exited 4: each may have taken an item
	last      time.Time
	stall     time.Duration
}

func newFlow() *flow {
	return &flow{sent: map[string]bool{}, maybe: map[string]bool{}, delivered: map[string]int{}, last: time.Now()}
}

func (f *flow) send(body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.outstandingLocked() == 0 {
		f.last = time.Now() // a stall starts when something is outstanding
	}
	f.sent[body] = true
}

func (f *flow) maybeSend(body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.maybe[body] = true
}

// deliverAll sets what has been delivered, by body, from every consumer's
// output so far.
func (f *flow) deliverAll(counts map[string]int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if total(counts) > total(f.delivered) {
		f.last = time.Now()
	}
	f.delivered = counts
}

func (f *flow) deliver(body string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delivered[body]++
	f.last = time.Now()
}

func total(m map[string]int) (n int) {
	for _, v := range m {
		n += v
	}
	return n
}

// outstandingLocked is how many sent messages have not arrived, less those
// a pop that exited 4 may have taken.
func (f *flow) outstandingLocked() int {
	n := 0
	for b := range f.sent {
		if f.delivered[b] == 0 {
			n++
		}
	}
	return max(0, n-f.taken)
}

// tick notes a stall: messages outstanding, none delivered since last. It
// returns how long the stall under way has lasted, or 0.
func (f *flow) tick() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.outstandingLocked() == 0 {
		f.last = time.Now()
		return 0
	}
	d := time.Since(f.last)
	f.stall = max(f.stall, d)
	return d
}

// hungAfter is how long a pattern may deliver nothing while messages are
// outstanding before its consumers count as hung: each gets SIGQUIT, so that
// its stderr (in the report) shows where its goroutines were, and is started
// again. No fault lasts a tenth of it.
const hungAfter = time.Minute

// exit counts a command's exit code and, for each code but 0, the causes
// (see cause) and the whole stderr of the first three.
func (s *soak) exit(kind string, code int, stderr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.exits[kind] == nil {
		s.exits[kind] = map[int]int{}
	}
	s.exits[kind][code]++
	key := kind + " exit " + strconv.Itoa(code)
	if code == 0 {
		return
	}
	if len(s.samples[key]) < 3 {
		s.samples[key] = append(s.samples[key], strings.TrimSpace(stderr))
	}
	if s.causes[key] == nil {
		s.causes[key] = map[string]int{}
	}
	s.causes[key][cause(stderr)]++
}

var digits = regexp.MustCompile(`[0-9]+`)

// cause is the first line of a command's stderr with every number as N,
// so that exits of one cause count together whatever address, port or
// slot they name.
func cause(stderr string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(stderr), "\n")
	return digits.ReplaceAllString(line, "N")
}

// supervised is a long-running command the soak keeps running.
type supervised struct {
	kind string
	mu   sync.Mutex
	all  []*proc // every process it ran, the last one running
	kill atomic.Bool
}

func (sv *supervised) current() *proc {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	return sv.all[len(sv.all)-1]
}

// supervise runs args until the soak stops, starting it again whenever it
// ends: an end the soak did not cause is reported.
func (s *soak) supervise(ctx context.Context, kind string, args []string) {
	sv := &supervised{kind: kind}
	sv.all = append(sv.all, startChatq(s.t, s.env, args...))
	s.mu.Lock()
	s.procs = append(s.procs, sv)
	s.mu.Unlock()
	s.loops.Add(1)
	go func() {
		defer s.loops.Done()
		for {
			p := sv.current()
			<-p.done
			if s.stopping.Load() {
				return
			}
			killed := sv.kill.Swap(false)
			code := p.code
			if killed {
				code = -9
			} else {
				s.mu.Lock()
				s.unexpected = append(s.unexpected, p.String())
				s.mu.Unlock()
			}
			s.exit(kind+" (ended)", code, p.errOut.String())
			if ctx.Err() != nil {
				return
			}
			sv.mu.Lock()
			sv.all = append(sv.all, startChatq(s.t, s.env, args...))
			sv.mu.Unlock()
		}
	}()
}

// popLoop runs `list blpop` processes one after another, each taking one
// item.
func (s *soak) popLoop(ctx context.Context) {
	s.loops.Add(1)
	go func() {
		defer s.loops.Done()
		for !s.stopping.Load() && ctx.Err() == nil {
			p := startChatq(s.t, s.env, "list", "blpop", "items", "--wait", "0")
			s.mu.Lock()
			s.procs = append(s.procs, &supervised{kind: "list blpop", all: []*proc{p}})
			s.mu.Unlock()
			<-p.done
			if s.stopping.Load() && p.code == 130 {
				return // interrupted at the end, waiting
			}
			s.exit("list blpop", p.code, p.errOut.String())
			switch p.code {
			case 0:
				s.list.deliver(strings.TrimSuffix(p.out.String(), "\n"))
			case 4:
				s.list.mu.Lock()
				s.list.taken++
				s.list.mu.Unlock()
			default:
				s.mu.Lock()
				s.unexpected = append(s.unexpected, p.String())
				s.mu.Unlock()
			}
		}
	}()
}

// fault injects one fault at random and undoes it.
func (s *soak) fault(ctx context.Context, c *redistest.Cluster, rng *rand.Rand, slots map[string]int) {
	t := s.t
	pick := func(nodes []*redistest.Server) *redistest.Server { return nodes[rng.IntN(len(nodes))] }
	var name string
	switch rng.IntN(7) {
	case 0:
		name = "restart a node"
		n := pick(c.Nodes)
		wasMaster := slices.Contains(c.Masters(ctx), n)
		n.Kill()
		time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
		n.Start()
		c.WaitHealthy(t)
		if wasMaster && !slices.Contains(c.Masters(ctx), n) {
			// Down longer than the node timeout: its replica took over,
			// and may not have had the last writes (Redis's loss).
			name = "restart a node (it failed over)"
		}
	case 1:
		name = "promote a replica"
		if err := c.Promote(ctx, pick(c.Replicas(ctx))); err != nil {
			// Redis's manual failover did not complete: not chatq's
			// failure, and the cluster goes on as it was.
			t.Logf("promote a replica: %v", err)
			name = "promote a replica (did not complete)"
		}
	case 2:
		name = "CLIENT KILL on a master"
		if err := pick(c.Masters(ctx)).KillClients(ctx); err != nil {
			t.Fatal(err)
		}
	case 3:
		name = "drop a master's next reply"
		pick(c.Masters(ctx)).Proxy.DropReplies(1)
	case 4:
		name = "blackhole a master"
		p := pick(c.Masters(ctx)).Proxy
		p.Blackhole(true)
		time.Sleep(time.Duration(500+rng.IntN(2500)) * time.Millisecond)
		p.Blackhole(false)
	case 5:
		name = "SIGKILL a worker"
		var workers []*supervised
		s.mu.Lock()
		for _, sv := range s.procs {
			if sv.kind == "queue work" {
				workers = append(workers, sv)
			}
		}
		s.mu.Unlock()
		sv := workers[rng.IntN(len(workers))]
		sv.kill.Store(true)
		_ = sv.current().cmd.Process.Signal(syscall.SIGKILL)
	case 6:
		pattern := []string{"chat", "queue", "list"}[rng.IntN(3)]
		name = "move the " + pattern + "'s slot"
		slot := slots[pattern]
		owner, err := c.Owner(ctx, slot)
		if err != nil {
			t.Fatal(err)
		}
		var others []*redistest.Server
		for _, m := range c.Masters(ctx) {
			if m != owner {
				others = append(others, m)
			}
		}
		// The slot stays split for about 1.5 s (30 ms after each of the
		// first 50 keys), then the rest moves at once, as a reshard moves
		// it: the slot holds one key per token record (a write in the
		// last 10 minutes), and a pause after each of hundreds of keys
		// would keep it split longer than any --timeout, which no
		// reshard does (redis-cli moves 10 keys per MIGRATE, unpaused).
		moved := 0
		pause := func() {
			if moved++; moved <= 50 {
				time.Sleep(30 * time.Millisecond)
			}
		}
		if err := c.MigrateSlot(ctx, slot, pick(others), redistest.MigrateOptions{AfterKey: pause}); err != nil {
			t.Fatal(err)
		}
	}
	s.mu.Lock()
	s.faults[name]++
	s.mu.Unlock()
}

// monitor reads the consumers' output every 200 ms, for the deliveries and
// the stalls; the returned function stops it after a last read.
func (s *soak) monitor() func() {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		tk := time.NewTicker(200 * time.Millisecond)
		defer tk.Stop()
		quit := map[*flow]bool{} // SIGQUIT sent in the stall under way
		for {
			s.read()
			for f, kind := range map[*flow]string{s.chat: "chat watch", s.queue: "queue work", s.list: "list blpop"} {
				switch d := f.tick(); {
				case d == 0:
					quit[f] = false
				case d > hungAfter && !quit[f]:
					quit[f] = true
					s.quitAll(kind)
				}
			}
			select {
			case <-done:
				s.read()
				return
			case <-tk.C:
			}
		}
	}()
	return func() { close(done); <-stopped }
}

// quitAll sends SIGQUIT to every running consumer of kind.
func (s *soak) quitAll(kind string) {
	s.mu.Lock()
	procs := slices.Clone(s.procs)
	s.mu.Unlock()
	for _, sv := range procs {
		if p := sv.current(); sv.kind == kind && p.running() {
			_ = p.cmd.Process.Signal(syscall.SIGQUIT)
		}
	}
}

// read counts the deliveries in the consumers' output: chat watch's
// messages, and the jobs queue work handled (by body, from the handler's
// file of "ID BODY" lines), counting the acks of each: a job whose ack's
// reply was lost was handled (and acked or not: then it comes back), and a
// job acked twice is one delivered more often than at-least-once allows.
func (s *soak) read() {
	chats, acked := map[string]int{}, map[string]int{}
	s.mu.Lock()
	procs := slices.Clone(s.procs)
	s.mu.Unlock()
	for _, sv := range procs {
		sv.mu.Lock()
		all := slices.Clone(sv.all)
		sv.mu.Unlock()
		for _, p := range all {
			switch sv.kind {
			case "chat watch":
				for _, m := range jsonLines[struct{ Message string }](p.out.String()) {
					chats[m.Message]++
				}
			case "queue work":
				for _, o := range jsonLines[struct {
					ID    string
					Acked bool
				}](p.out.String()) {
					if o.Acked {
						acked[o.ID]++
					}
				}
			}
		}
	}
	s.chat.deliverAll(chats)
	b, _ := os.ReadFile(filepath.Join(s.dir, "bodies"))
	body := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if id, text, ok := strings.Cut(line, " "); ok {
			body[id] = text
		}
	}
	jobs := map[string]int{}
	for _, text := range body {
		jobs[text] = max(jobs[text], 1)
	}
	for id, n := range acked {
		if n > 1 {
			jobs[body[id]] = n
		}
	}
	s.queue.deliverAll(jobs)
}

// drained reports whether everything sent has arrived, and the queue is
// empty (a job handled but not acked comes back until it is).
func (s *soak) drained() bool {
	s.read()
	for _, f := range []*flow{s.chat, s.queue, s.list} {
		f.mu.Lock()
		n := f.outstandingLocked()
		f.mu.Unlock()
		if n > 0 {
			return false
		}
	}
	return s.queueLeft() == 0
}

// queueLeft is how many messages the queue holds, -1 when stats fail.
func (s *soak) queueLeft() int {
	r := runOnce(context.Background(), s.env, "-o", "json", "queue", "stats", "jobs")
	var st struct{ Msgs int }
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &st) != nil {
		return -1
	}
	return st.Msgs
}

// stop interrupts every consumer still running; each must exit 0 (or 130,
// a blocking pop interrupted while it waits).
func (s *soak) stop() {
	s.stopping.Store(true)
	s.mu.Lock()
	procs := slices.Clone(s.procs)
	s.mu.Unlock()
	for _, sv := range procs {
		p := sv.current()
		if !p.running() {
			continue
		}
		code := p.interrupt()
		want := 0
		if sv.kind == "list blpop" {
			want = 130
		}
		if code != want {
			s.mu.Lock()
			s.unexpected = append(s.unexpected, fmt.Sprintf("on interrupt, exit %d, want %d: %s", code, want, p))
			s.mu.Unlock()
		}
	}
	s.loops.Wait()
}

// soakReport is the JSON of CHATQ_SOAK_REPORT.
type soakReport struct {
	Patterns   map[string]patternReport  `json:"patterns"`
	Faults     map[string]int            `json:"faults"`
	Exits      map[string]map[string]int `json:"exit_codes"`
	Samples    map[string][]string       `json:"stderr_samples"`
	Causes     map[string]map[string]int `json:"exit_causes"`
	Unexpected []string                  `json:"unexpected_exits"`
}

type patternReport struct {
	Sent       int     `json:"sent"`
	MaybeSent  int     `json:"maybe_sent"`
	Delivered  int     `json:"delivered"`
	Lost       int     `json:"lost"`
	MaybeTaken int     `json:"maybe_taken"`
	Duplicated int     `json:"duplicated"`
	Strays     int     `json:"strays"`
	StallSec   float64 `json:"longest_stall_s"`
}

func (s *soak) report(t *testing.T) {
	r := soakReport{Patterns: map[string]patternReport{}, Faults: s.faults, Exits: map[string]map[string]int{}, Samples: s.samples, Causes: s.causes, Unexpected: s.unexpected}
	for name, f := range map[string]*flow{"chat": s.chat, "queue": s.queue, "list": s.list} {
		f.mu.Lock()
		pr := patternReport{Sent: len(f.sent), MaybeSent: len(f.maybe), StallSec: f.stall.Seconds()}
		missing := 0
		for b := range f.sent {
			if f.delivered[b] == 0 {
				missing++
			}
		}
		pr.MaybeTaken = min(missing, f.taken)
		pr.Lost = missing - pr.MaybeTaken
		if pr.Lost > 0 {
			var some []string
			for b := range f.sent {
				if f.delivered[b] == 0 && len(some) < 10 {
					some = append(some, b)
				}
			}
			t.Logf("%s: not delivered: %v", name, some)
		}
		for b, n := range f.delivered {
			pr.Delivered++
			if n > 1 {
				pr.Duplicated++
			}
			if !f.sent[b] && !f.maybe[b] {
				pr.Strays++
			}
		}
		f.mu.Unlock()
		r.Patterns[name] = pr
	}
	for kind, codes := range s.exits {
		r.Exits[kind] = map[string]int{}
		for code, n := range codes {
			k := strconv.Itoa(code)
			if code == -9 {
				k = "SIGKILL (the soak's)"
			}
			r.Exits[kind][k] = n
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n%-6s %6s %6s %9s %5s %11s %4s %6s %9s\n", "", "sent", "maybe", "delivered", "lost", "maybe-taken", "dup", "stray", "stall")
	for _, name := range []string{"chat", "queue", "list"} {
		p := r.Patterns[name]
		fmt.Fprintf(&b, "%-6s %6d %6d %9d %5d %11d %4d %6d %8.1fs\n", name, p.Sent, p.MaybeSent, p.Delivered, p.Lost, p.MaybeTaken, p.Duplicated, p.Strays, p.StallSec)
	}
	fmt.Fprintf(&b, "faults:")
	for _, k := range sortedKeys(r.Faults) {
		fmt.Fprintf(&b, " %s %d;", k, r.Faults[k])
	}
	fmt.Fprintf(&b, "\nexit codes:\n")
	for _, k := range sortedKeys(r.Exits) {
		fmt.Fprintf(&b, "  %-20s %v\n", k, r.Exits[k])
	}
	fmt.Fprintf(&b, "causes of the exits (first line of stderr, numbers as N):\n")
	for _, k := range sortedKeys(r.Causes) {
		for _, c := range sortedKeys(r.Causes[k]) {
			fmt.Fprintf(&b, "  %s: %d × %s\n", k, r.Causes[k][c], c)
		}
	}
	fmt.Fprintf(&b, "stderr of the first exits of each code:\n")
	for _, k := range sortedKeys(r.Samples) {
		for _, e := range r.Samples[k] {
			fmt.Fprintf(&b, "  %s: %s\n", k, strings.ReplaceAll(e, "\n", " | "))
		}
	}
	t.Log(b.String())
	if path := os.Getenv("CHATQ_SOAK_REPORT"); path != "" {
		j, _ := json.MarshalIndent(r, "", "  ")
		if err := os.WriteFile(path, append(j, '\n'), 0o644); err != nil {
			t.Error(err)
		}
	}
	if left := s.queueLeft(); left != 0 {
		r := runOnce(context.Background(), s.env, "-o", "json", "queue", "peek", "jobs", "-n", "20")
		t.Errorf("the queue holds %d messages at the end: %s", left, r.stdout)
	}
	for name, p := range r.Patterns {
		if p.Lost > 0 || p.Duplicated > 0 || p.Strays > 0 || p.Sent == 0 {
			t.Errorf("%s: %d sent, %d lost, %d duplicated, %d delivered but never sent", name, p.Sent, p.Lost, p.Duplicated, p.Strays)
		}
	}
	for _, u := range r.Unexpected {
		t.Errorf("a long-running command ended on its own: %s", u)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
