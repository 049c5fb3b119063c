// Package bench holds `chatq bench`, the load generator for every pattern.
package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

type benchOptions struct {
	cmdutil.Output
	// Client returns the client the setup and the unpipelined steps share,
	// its pool sized for Clients; Conn a client of its own, closed with
	// the command, for each pipelined bench client.
	Client func() (redis.UniversalClient, error)
	Conn   func() (redis.UniversalClient, error)

	Pattern  string
	Clients  int
	Requests int
	Pipeline int
	Size     int
	Preload  int
	Threads  int
	Force    bool
	Prefix   string // the global --prefix: the benchmark works under Prefix+benchPrefix
	Cluster  bool
}

// NewCmdBench returns `chatq bench` (runF: see cmdutil.RunWith).
func NewCmdBench(f *cmdutil.Factory, runF func(context.Context, *benchOptions) error) *cobra.Command {
	opts := &benchOptions{}
	cmd := &cobra.Command{
		Use:   "bench ping|chat|queue|list",
		Short: "Measure throughput and latency of a pattern's operations on the server",
		Long: `Measure what the server sustains with a pattern, in the spirit of
redis-benchmark: --clients concurrent connections run --requests operations of
each step (the real package operations), --pipeline at a time, and the
throughput and latency percentiles are printed. Each operation the commands
make safe to repeat carries a client token, as the command does on its first
try (which writes the token's record and looks nothing up), so the figures
include the record (docs/reliability.md).

  ping   PING, the round-trip floor to compare against
  chat   chat send, then chat pending
  queue  queue push, then queue poll + ack
  list   list push, then list pop

--preload N stores data before the timed steps, to see how an operation
scales with what is stored: N items in the list, N messages in the queue, or
N chats each chat reader is a member of.

It works under a prefix of its own, "chatq-bench:" after the global --prefix,
and deletes its keys at the end. It refuses to start when keys exist under
that prefix (a benchmark running, or one that was killed), unless --force, in
which case those keys are deleted too.

Like redis-benchmark, it runs its clients on one thread by default: on a
machine where client and server share the cores, that costs the client the
least CPU per operation, so more is left to the server. Give --threads N
when the server is faster than one client thread can drive.`,
		Example: `  chatq bench ping --clients 50 --requests 100000
  chatq bench queue --clients 1 --requests 20000 -o json
  chatq bench list --clients 50 --pipeline 16
  chatq bench list --clients 1 --requests 10000 --preload 1000000
  chatq bench queue --clients 200 --threads 4`,
		Args:      cmdutil.ExactArgs(1),
		ValidArgs: []string{"ping", "chat", "queue", "list"},
		RunE: cmdutil.RunWith(f, opts, runF, benchRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			cfg := f.Config()
			opts.Pattern, opts.Prefix, opts.Cluster = args[0], cfg.Prefix, cfg.Cluster
			if err := opts.validate(); err != nil {
				return nil, err
			}
			clients := opts.Clients
			opts.Client = func() (redis.UniversalClient, error) {
				f.SetMinPoolSize(clients)
				return f.Client()
			}
			opts.Conn = func() (redis.UniversalClient, error) {
				c, err := conn.NewClient(cfg, f.IO, 1)
				if err != nil {
					return nil, err
				}
				f.OnClose(func() { c.Close() })
				return c, nil
			}
			return nil, nil
		}),
	}
	fl := cmd.Flags()
	fl.IntVarP(&opts.Clients, "clients", "c", 50, "concurrent clients (connections)")
	fl.IntVarP(&opts.Requests, "requests", "n", 100000, "operations per step")
	fl.IntVarP(&opts.Pipeline, "pipeline", "P", 1, "operations sent per round trip")
	fl.IntVarP(&opts.Size, "size", "d", 16, "message or item size in bytes")
	fl.IntVar(&opts.Preload, "preload", 0, "stored before timing: items (list), messages (queue), or chats each reader is in (chat)")
	fl.IntVar(&opts.Threads, "threads", 1, "threads running the clients' Go code (as redis-benchmark --threads)")
	fl.BoolVar(&opts.Force, "force", false, "run even when keys exist under the prefix (they are deleted after)")
	// It writes only keys under a prefix of its own, which it deletes: a lost
	// reply leaves nothing of the user's to check.
	return cmdutil.MarkRead(cmd)
}

type benchResult struct {
	Pattern   string  `json:"pattern"`
	Step      string  `json:"step"`
	Clients   int     `json:"clients"`
	Pipeline  int     `json:"pipeline"`
	Size      int     `json:"size"`
	Preload   int     `json:"preload"`
	Requests  int     `json:"requests"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	P50Ms     float64 `json:"p50_ms"`
	P99Ms     float64 `json:"p99_ms"`
	MaxMs     float64 `json:"max_ms"`
	Threads   int     `json:"threads"`
}

func (o *benchOptions) validate() error {
	if _, ok := benchWorkloads()[o.Pattern]; !ok {
		return cmdutil.UsageErrorf("unknown pattern %q: want ping, chat, queue or list", o.Pattern)
	}
	switch {
	case o.Clients < 1:
		return cmdutil.UsageErrorf("--clients must be at least 1")
	case o.Requests < 1:
		return cmdutil.UsageErrorf("--requests must be at least 1")
	case o.Pipeline < 1:
		return cmdutil.UsageErrorf("--pipeline must be at least 1")
	case o.Size < 1:
		return cmdutil.UsageErrorf("--size must be at least 1")
	case o.Preload < 0:
		return cmdutil.UsageErrorf("--preload must not be negative")
	case o.Threads < 1:
		return cmdutil.UsageErrorf("--threads must be at least 1")
	case o.Pipeline > 1 && o.Cluster:
		return cmdutil.UsageErrorf("--pipeline above 1 needs a standalone server, not --cluster")
	}
	return nil
}

func benchRun(ctx context.Context, opts *benchOptions) error {
	// Its own prefix under the user's: --force then can only ever delete
	// keys a benchmark wrote, never the data under the user's --prefix.
	prefix := opts.Prefix + benchPrefix
	c, err := opts.Client()
	if err != nil {
		return err
	}
	busy, err := keyspace.AnyWithPrefix(ctx, c, prefix)
	if err != nil {
		return err
	}
	if busy && !opts.Force {
		return cmdutil.WithHint(fmt.Errorf("keys exist under the prefix %q: refusing to benchmark on them", prefix),
			"pick another --prefix, or pass --force to run anyway and delete them after")
	}
	defer func() {
		if err := keyspace.DeletePrefix(context.WithoutCancel(ctx), c, prefix); err != nil {
			opts.IO.Infof("warning: could not delete the benchmark's keys %s*: %v", prefix, err)
		}
	}()

	steps, err := benchWorkloads()[opts.Pattern](ctx, c, prefix, opts)
	if err != nil {
		return err
	}
	conns, err := benchConns(c, opts)
	if err != nil {
		return err
	}
	// The timed steps run on --threads threads (GOMAXPROCS). With more
	// threads than needed, Go hands each reply from the thread that polled
	// the network to an idle one: a wake-up and a context switch per
	// operation (about a quarter of the client's CPU with 50 clients on two
	// cores), which redis-benchmark's one event loop does not pay.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(opts.Threads))
	var results []benchResult
	for _, s := range steps {
		if opts.IO.ErrTTY {
			opts.IO.Infof("bench %s %s: %d requests from %d clients...", opts.Pattern, s.name, opts.Requests, opts.Clients)
		}
		r, err := runBenchStep(ctx, s, conns, opts)
		if err != nil {
			return fmt.Errorf("bench %s %s: %w", opts.Pattern, s.name, err)
		}
		r.Pattern, r.Threads = opts.Pattern, opts.Threads
		results = append(results, r)
	}
	if opts.JSON {
		return opts.IO.WriteJSON(results)
	}
	t := opts.IO.NewTable("STEP", "CLIENTS", "PIPELINE", "SIZE", "PRELOAD", "REQUESTS", "OPS/S", "P50 MS", "P99 MS", "MAX MS")
	for _, r := range results {
		t.Row(r.Pattern+" "+r.Step, r.Clients, r.Pipeline, r.Size, r.Preload, r.Requests,
			fmt.Sprintf("%.0f", r.OpsPerSec), ms3(r.P50Ms), ms3(r.P99Ms), ms3(r.MaxMs))
	}
	return t.Flush()
}

func ms3(v float64) string { return fmt.Sprintf("%.3f", v) }

// benchStep is one operation a benchmark times. worker binds the operation
// to the client of bench goroutine g; each call of the returned function is
// one operation.
type benchStep struct {
	name   string
	worker func(c redis.UniversalClient, g int) func(ctx context.Context) error
}

// benchWorkload is what `chatq bench PATTERN` runs: setup on c (untimed),
// then each step for --requests operations.
type benchWorkload func(ctx context.Context, c redis.UniversalClient, prefix string, o *benchOptions) ([]benchStep, error)

// benchWorkloads maps a pattern to its workload.
func benchWorkloads() map[string]benchWorkload {
	return map[string]benchWorkload{
		"ping":  benchPing,
		"chat":  benchChat,
		"list":  benchList,
		"queue": benchQueue,
	}
}

// benchPrefix is put after the global --prefix in front of every key a
// benchmark writes.
const benchPrefix = "chatq-bench:"

// runBenchStep runs --requests operations of s from --clients connections
// with --pipeline operations in flight on each, and records each one's
// latency. With --pipeline above 1 each connection is a go-redis
// autopipeliner, which batches the operations of its goroutines into
// pipelines, as redis-benchmark -P does.
func runBenchStep(ctx context.Context, s benchStep, conns []redis.UniversalClient, o *benchOptions) (benchResult, error) {
	goroutines := o.Clients * o.Pipeline
	var next atomic.Int64
	lat := make([][]time.Duration, goroutines)
	errs := make([]error, goroutines)
	var wg sync.WaitGroup
	start := time.Now()
	for g := range goroutines {
		op := s.worker(conns[g/o.Pipeline], g)
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, o.Requests/goroutines+1)
			for next.Add(1) <= int64(o.Requests) && ctx.Err() == nil {
				t0 := time.Now()
				if err := op(ctx); err != nil {
					errs[g] = err
					break
				}
				mine = append(mine, time.Since(t0))
			}
			lat[g] = mine
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return benchResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return benchResult{}, err
	}
	all := slices.Concat(lat...)
	slices.Sort(all)
	return benchResult{
		Step: s.name, Clients: o.Clients, Pipeline: o.Pipeline, Size: o.Size, Preload: o.Preload, Requests: len(all),
		Seconds:   elapsed.Seconds(),
		OpsPerSec: float64(len(all)) / elapsed.Seconds(),
		P50Ms:     percentileMs(all, 0.50),
		P99Ms:     percentileMs(all, 0.99),
		MaxMs:     percentileMs(all, 1),
	}, nil
}

// benchConns returns the connection of each bench client: the shared client
// (its pool holds --clients connections) unpipelined, else one autopipelined
// client of its own each.
func benchConns(c redis.UniversalClient, o *benchOptions) ([]redis.UniversalClient, error) {
	conns := make([]redis.UniversalClient, o.Clients)
	for i := range conns {
		if o.Pipeline == 1 {
			conns[i] = c
			continue
		}
		own, err := o.Conn()
		if err != nil {
			return nil, err
		}
		ap, err := own.(*redis.Client).AutoPipeline()
		if err != nil {
			return nil, err
		}
		conns[i] = ap
	}
	return conns, nil
}

// percentileMs is the q-quantile of sorted durations, in milliseconds.
func percentileMs(sorted []time.Duration, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	i = max(0, min(i, len(sorted)-1))
	return float64(sorted[i].Microseconds()) / 1000
}

// benchPing times PING: the round-trip floor of this client and server.
func benchPing(ctx context.Context, c redis.UniversalClient, prefix string, o *benchOptions) ([]benchStep, error) {
	return []benchStep{{name: "ping", worker: func(c redis.UniversalClient, g int) func(ctx context.Context) error {
		return func(ctx context.Context) error { return c.Ping(ctx).Err() }
	}}}, nil
}

// preloadParallel runs fn(i) for i in [0, n) from 64 goroutines over an
// autopipelined connection, so that preloading a million of anything takes
// seconds; it falls back to c itself on a cluster.
func preloadParallel(ctx context.Context, c redis.UniversalClient, n int, fn func(ctx context.Context, c redis.UniversalClient, i int) error) error {
	conn := c
	if rc, ok := c.(*redis.Client); ok {
		ap, err := rc.AutoPipeline()
		if err != nil {
			return err
		}
		// The client is closed with the command, and its autopipeliner
		// with it.
		conn = ap
	}
	var next atomic.Int64
	errs := make([]error, 64)
	var wg sync.WaitGroup
	for g := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1)) - 1; i < n && ctx.Err() == nil; i = int(next.Add(1)) - 1 {
				if err := fn(ctx, conn, i); err != nil {
					errs[g] = err
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return ctx.Err()
}

// benchPayload is a message or item of --size bytes.
func benchPayload(size int) string { return strings.Repeat("x", size) }
