// Package queues is the one model through which chatq reads and operates
// the queues that libraries keep on Redis: RSMQ's layout (pkg/delayq),
// BullMQ's, asynq's and Redis Streams consumer groups, each one package
// (pkg/queues/<kind>) behind the small interfaces here.
//
// A queue is addressed as KIND:NAME ("bullmq:mail", "asynq:critical",
// "stream:orders/billing"); RSMQ's queues keep their plain names, which
// can hold no ':'. What NAME holds is the kind's own (a BullMQ prefix, a
// stream and its group) and is documented by it; Parse splits an address.
//
// Every kind maps its library's states onto chatq's: ready (could be
// taken now), delayed (due later), inflight (taken, not finished), retry
// (failed, will run again later), dead (failed for good), done (finished
// and kept). A kind without a state reports nil for it, not 0.
//
// Reading is the Queue interface. Writing is optional interfaces (Retrier,
// Remover, Redriver, Pauser, Recoverer, DeadLetterer): a kind implements
// those its library has an operation for, and each does what the
// library's own operation does, re-checking the job's state atomically
// and touching only the keys the library touches. A layout version the
// kind was not tested with is read-only: its writes return an error
// matching ErrReadOnly and change nothing.
//
// Every method does bounded work on the server whatever the number of
// jobs: counts are O(1) or O(log n) calls, listings read pages.
package queues

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Errors common to every kind. ErrInvalid is names.ErrInvalid (exit 2).
var (
	// ErrQueueNotFound: nothing of the queue is on the server.
	ErrQueueNotFound = errors.New("queue not found")
	// ErrJobNotFound: no job (message, task, entry) has that id.
	ErrJobNotFound = errors.New("job not found")
	// ErrReadOnly: the layout's version is not one chatq was tested with,
	// so it reads but does not write it.
	ErrReadOnly = errors.New("layout version not known: read-only")
	// ErrUnknownKind: an address names no registered kind.
	ErrUnknownKind = errors.New("unknown queue kind")
)

// States, chatq's names for where a job stands, as JSON and docs use them.
const (
	Ready    = "ready"
	Delayed  = "delayed"
	Inflight = "inflight"
	Retry    = "retry"
	Dead     = "dead"
	Done     = "done"
)

// States lists chatq's states in the order tables show them.
var States = []string{Ready, Delayed, Inflight, Retry, Dead, Done}

// Env is what a kind needs to reach the server.
type Env struct {
	RDB redis.UniversalClient
	// Prefix is chatq's --prefix, put in front of every key a kind reads
	// or writes (in front of the library's own prefix).
	Prefix string
}

// Kind is one library's layout of queues.
type Kind interface {
	// Name is the kind's part of an address: "rsmq", "bullmq", "asynq",
	// "stream".
	Name() string
	// Discover does one bounded step of finding the kind's queues: one
	// SCAN or SSCAN (COUNT count) from cursor, and the few reads that
	// confirm what it found. It returns the names (addresses without
	// "KIND:") found in this step, possibly again in a later one, and the
	// cursor to go on from; 0 ends a cycle. Start with 0.
	Discover(ctx context.Context, cursor uint64, count int64) (names []string, next uint64, err error)
	// Open returns the queue at name; it makes no server call (a missing
	// queue shows in the first call). A malformed name matches ErrInvalid.
	Open(name string) (Queue, error)
}

// Queue is one queue of a kind: what every command can read of it.
type Queue interface {
	// Address is "KIND:NAME" (RSMQ's: NAME), which every command takes.
	Address() string
	// Counts reads the queue's counts at one instant where the layout
	// allows (one pipeline or script).
	Counts(ctx context.Context) (*Counts, error)
	// Scan calls fn with pages of the jobs that opt keeps, in the order
	// the state's own list or set has them, until fn returns an error
	// (returned, except ErrStop), the jobs run out or opt.Max jobs were
	// passed. Each page is one bounded read.
	Scan(ctx context.Context, opt ScanOptions, fn func([]Job) error) error
	// Get reads one job by id (ErrJobNotFound).
	Get(ctx context.Context, id string) (*Job, error)
}

// ErrStop, returned by a Scan callback, ends the scan without error.
var ErrStop = errors.New("stop")

// Counts are a queue's counts by chatq's states. Nil is "the kind has no
// such state"; a state the kind has but is empty is a pointer to 0.
type Counts struct {
	Ready, Delayed, Inflight, Retry, Dead, Done *int64
	// Paused is whether the queue is paused (nil: the kind cannot pause).
	Paused *bool
	// Other holds the library's states that map onto none of chatq's, by
	// the library's name (BullMQ's "waiting-children"), and sub-counts an
	// operator looks at (BullMQ's "prioritized", within Ready).
	Other map[string]int64
	// OldestReady is how long the ready job that has waited longest has
	// been ready, nil when none is or the layout does not say.
	OldestReady *time.Duration
	// Version is the layout's version as the queue records it ("" when it
	// records none), and ReadOnly why writes are refused ("" when not).
	Version  string
	ReadOnly string
}

// Total is the sum of the counts the kind has.
func (c *Counts) Total() int64 {
	var n int64
	for _, p := range []*int64{c.Ready, c.Delayed, c.Inflight, c.Retry, c.Dead, c.Done} {
		if p != nil {
			n += *p
		}
	}
	return n
}

// Of returns the count of chatq state s (nil when the kind has none).
func (c *Counts) Of(s string) *int64 {
	switch s {
	case Ready:
		return c.Ready
	case Delayed:
		return c.Delayed
	case Inflight:
		return c.Inflight
	case Retry:
		return c.Retry
	case Dead:
		return c.Dead
	case Done:
		return c.Done
	}
	return nil
}

// N returns a pointer to n, for Counts.
func N(n int64) *int64 { return &n }

// ScanOptions select the jobs a Scan passes.
type ScanOptions struct {
	// State is one of chatq's states ("" for all the kind has, in the
	// order of States). A kind without it returns ErrInvalid.
	State string
	// Grep keeps jobs whose id, name or data contains it, byte for byte.
	Grep string
	// Max is the most jobs passed (0: no limit); Page the most read per
	// call (0: the kind's default, about 100).
	Max, Page int
	// MinAttempts keeps jobs delivered or attempted at least this often.
	MinAttempts int64
	// InflightFor keeps in-flight jobs taken more than this long ago
	// (idle for that long, for a stream's pending entries).
	InflightFor time.Duration
}

// Job is one job, message, task or entry, as every kind shows it.
type Job struct {
	ID    string
	State string // chatq's state
	// KindState is the library's own name of the state ("wait",
	// "prioritized", "archived", "pending") where it differs.
	KindState string
	// Name is the job's name or task type ("" when the kind has none).
	Name string
	// Data is the payload as text: JSON as the library stored it, or the
	// stream entry's fields as a JSON object.
	Data string
	// Attempts is how often it was attempted or delivered.
	Attempts int64
	// Error is the last failure's message, Stack its first stack line.
	Error string
	Stack string
	// Times; zero when the kind does not record it.
	Created  time.Time
	Due      time.Time // when a delayed or retrying job runs
	Started  time.Time // when it was last taken
	Finished time.Time // completed or failed for good
	// Consumer holds a stream entry or a taken job ("" otherwise).
	Consumer string
	// Idle is how long an in-flight job has gone without being touched
	// (a stream entry's idle time), 0 when unknown.
	Idle time.Duration
	// Extra holds what else the library records that an operator reads
	// (BullMQ's opts, asynq's queue and retention), by its own names.
	Extra map[string]any
}

// Result is what an action did: the ids it applied to, and those it left
// with why (their state changed under it, not found).
type Result struct {
	Done    []string          `json:"done"`
	Skipped map[string]string `json:"skipped,omitempty"`
}

// Skip records that id was left, and why.
func (r *Result) Skip(id, why string) {
	if r.Skipped == nil {
		r.Skipped = map[string]string{}
	}
	r.Skipped[id] = why
}

// Retrier runs jobs again now: a dead, retrying or delayed job goes back
// to ready, as the library's own retry does.
type Retrier interface {
	Retry(ctx context.Context, ids []string) (*Result, error)
}

// Remover removes jobs by id. An in-flight job is left (skipped) unless
// force: its worker may still finish it.
type Remover interface {
	Remove(ctx context.Context, ids []string, force bool) (*Result, error)
}

// Redriver moves up to max dead jobs (0: all) back to ready, in bounded
// batches, as the library's own bulk retry does.
type Redriver interface {
	Redrive(ctx context.Context, max int) (*Result, error)
}

// Pauser pauses and resumes a queue as the library does.
type Pauser interface {
	Pause(ctx context.Context) error
	Resume(ctx context.Context) error
}

// RecoverOptions select in-flight jobs to recover.
type RecoverOptions struct {
	// IDs, if set, are the only jobs considered.
	IDs []string
	// IdleFor: a stream entry idle at least this long (required for
	// streams; other kinds use the library's own lease or stall rule).
	IdleFor time.Duration
	// Consumer: a stream's consumer to claim entries for ("" returns
	// them to another delivery where the kind can).
	Consumer string
	// Max is the most recovered (0: no limit, in bounded batches).
	Max int
}

// Recoverer moves in-flight jobs whose worker is gone (BullMQ's stalled
// jobs, asynq's tasks whose lease expired) back to be taken again, as the
// library's own check does; for a stream, claims idle entries for a
// consumer.
type Recoverer interface {
	Recover(ctx context.Context, opt RecoverOptions) (*Result, error)
}

// DeadLetterOptions select in-flight jobs to dead-letter.
type DeadLetterOptions struct {
	// MinAttempts: jobs delivered at least this often (required).
	MinAttempts int64
	// To is where they go (a stream's key; "" for the kind's default).
	To  string
	Max int
}

// DeadLetterer moves jobs delivered too often out of the queue into a
// dead letter, keeping their origin (a stream's consumer group has no
// such place of its own).
type DeadLetterer interface {
	DeadLetter(ctx context.Context, opt DeadLetterOptions) (*Result, error)
}

// Access is what one operation of a kind asks of the server, for
// `chatq acl`: the commands it sends (scripts' own calls included, lower
// case) and the key patterns it touches (glob, prefix applied).
type Access struct {
	Op       string
	Write    bool
	Commands []string
	Keys     []string
}

// AccessLister is a kind that says what its operations ask of the server.
type AccessLister interface {
	Access() []Access
}

// Parse splits an address into its kind and name. An address with no ':'
// is RSMQ's: ("rsmq", address).
func Parse(address string) (kind, name string) {
	k, n, ok := strings.Cut(address, ":")
	if !ok {
		return "rsmq", address
	}
	return k, n
}

// Registry is the kinds a command reaches, in the order listings show
// them.
type Registry struct {
	kinds []Kind
}

// NewRegistry returns a registry of kinds (names must differ).
func NewRegistry(kinds ...Kind) *Registry { return &Registry{kinds: kinds} }

// Kinds returns the registered kinds.
func (r *Registry) Kinds() []Kind { return r.kinds }

// Kind returns the kind named name (ErrUnknownKind).
func (r *Registry) Kind(name string) (Kind, error) {
	for _, k := range r.kinds {
		if k.Name() == name {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%w %q (known: %s)", ErrUnknownKind, name, strings.Join(r.Names(), ", "))
}

// Names returns the registered kinds' names.
func (r *Registry) Names() []string {
	out := make([]string, len(r.kinds))
	for i, k := range r.kinds {
		out[i] = k.Name()
	}
	return out
}

// Open returns the queue at address.
func (r *Registry) Open(address string) (Queue, error) {
	kind, name := Parse(address)
	k, err := r.Kind(kind)
	if err != nil {
		return nil, err
	}
	return k.Open(name)
}

// Mark returns err, also matching kind (one of this package's errors),
// with err's message: a kind maps its own sentinel errors onto these.
func Mark(err, kind error) error {
	if err == nil || errors.Is(err, kind) {
		return err
	}
	return &marked{err: err, kind: kind}
}

type marked struct{ err, kind error }

func (e *marked) Error() string   { return e.err.Error() }
func (e *marked) Unwrap() []error { return []error{e.err, e.kind} }

// Page reads one page of the members of key: n from offset off, of a LIST
// (LRANGE; scores nil) or of a sorted set (ZRANGE with the scores). One
// bounded call, for the kinds whose states are lists and sorted sets.
func Page(ctx context.Context, rdb redis.UniversalClient, key string, list bool, off, n int64) ([]string, []float64, error) {
	if list {
		ids, err := rdb.LRange(ctx, key, off, off+n-1).Result()
		return ids, nil, err
	}
	zs, err := rdb.ZRangeWithScores(ctx, key, off, off+n-1).Result()
	if err != nil {
		return nil, nil, err
	}
	ids, scores := make([]string, len(zs)), make([]float64, len(zs))
	for i, z := range zs {
		ids[i], _ = z.Member.(string)
		scores[i] = z.Score
	}
	return ids, scores, nil
}
