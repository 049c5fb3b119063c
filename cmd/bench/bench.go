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

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/keyspace"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

type benchOptions struct {
	f        *cmdutil.Factory
	pattern  string
	clients  int
	requests int
	pipeline int
	size     int
	preload  int
	threads  int
	force    bool
}

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

func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &benchOptions{f: f}
	cmd := &cobra.Command{
		Use:   "bench ping|chat|queue|list",
		Short: "Measure throughput and latency of a pattern's operations on the server",
		Long: `Measure what the server sustains with a pattern, in the spirit of
redis-benchmark: --clients concurrent connections run --requests operations of
each step (the real package operations), --pipeline at a time, and the
throughput and latency percentiles are printed.

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
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.pattern = args[0]
			return benchRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.IntVarP(&opts.clients, "clients", "c", 50, "concurrent clients (connections)")
	fl.IntVarP(&opts.requests, "requests", "n", 100000, "operations per step")
	fl.IntVarP(&opts.pipeline, "pipeline", "P", 1, "operations sent per round trip")
	fl.IntVarP(&opts.size, "size", "d", 16, "message or item size in bytes")
	fl.IntVar(&opts.preload, "preload", 0, "stored before timing: items (list), messages (queue), or chats each reader is in (chat)")
	fl.IntVar(&opts.threads, "threads", 1, "threads running the clients' Go code (as redis-benchmark --threads)")
	fl.BoolVar(&opts.force, "force", false, "run even when keys exist under the prefix (they are deleted after)")
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

func benchRun(ctx context.Context, opts *benchOptions) error {
	f := opts.f
	workload, ok := benchWorkloads()[opts.pattern]
	if !ok {
		return cmdutil.UsageErrorf("unknown pattern %q: want ping, chat, queue or list", opts.pattern)
	}
	switch {
	case opts.clients < 1:
		return cmdutil.UsageErrorf("--clients must be at least 1")
	case opts.requests < 1:
		return cmdutil.UsageErrorf("--requests must be at least 1")
	case opts.pipeline < 1:
		return cmdutil.UsageErrorf("--pipeline must be at least 1")
	case opts.size < 1:
		return cmdutil.UsageErrorf("--size must be at least 1")
	case opts.preload < 0:
		return cmdutil.UsageErrorf("--preload must not be negative")
	case opts.threads < 1:
		return cmdutil.UsageErrorf("--threads must be at least 1")
	case opts.pipeline > 1 && f.Config().Cluster:
		return cmdutil.UsageErrorf("--pipeline above 1 needs a standalone server, not --cluster")
	}
	// Its own prefix under the user's: --force then can only ever delete
	// keys a benchmark wrote, never the data under the user's --prefix.
	prefix := f.Prefix() + benchPrefix
	f.SetMinPoolSize(opts.clients)
	c, err := f.Client()
	if err != nil {
		return err
	}
	busy, err := keyspace.AnyWithPrefix(ctx, c, prefix)
	if err != nil {
		return err
	}
	if busy && !opts.force {
		return cmdutil.WithHint(fmt.Errorf("keys exist under the prefix %q: refusing to benchmark on them", prefix),
			"pick another --prefix, or pass --force to run anyway and delete them after")
	}
	defer func() {
		if err := keyspace.DeletePrefix(context.WithoutCancel(ctx), c, prefix); err != nil {
			f.IO.Infof("warning: could not delete the benchmark's keys %s*: %v", prefix, err)
		}
	}()

	steps, err := workload(ctx, c, prefix, opts)
	if err != nil {
		return err
	}
	conns, err := benchConns(f, c, opts)
	if err != nil {
		return err
	}
	// The timed steps run on --threads threads (GOMAXPROCS). With more
	// threads than needed, Go hands each reply from the thread that polled
	// the network to an idle one: a wake-up and a context switch per
	// operation (about a quarter of the client's CPU with 50 clients on two
	// cores), which redis-benchmark's one event loop does not pay.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(opts.threads))
	var results []benchResult
	for _, s := range steps {
		if f.IO.ErrTTY {
			f.IO.Infof("bench %s %s: %d requests from %d clients...", opts.pattern, s.name, opts.requests, opts.clients)
		}
		r, err := runBenchStep(ctx, s, conns, opts)
		if err != nil {
			return fmt.Errorf("bench %s %s: %w", opts.pattern, s.name, err)
		}
		r.Pattern, r.Threads = opts.pattern, opts.threads
		results = append(results, r)
	}
	if f.JSON() {
		return f.IO.WriteJSON(results)
	}
	t := f.IO.NewTable("STEP", "CLIENTS", "PIPELINE", "SIZE", "PRELOAD", "REQUESTS", "OPS/S", "P50 MS", "P99 MS", "MAX MS")
	for _, r := range results {
		t.Row(r.Pattern+" "+r.Step, r.Clients, r.Pipeline, r.Size, r.Preload, r.Requests,
			fmt.Sprintf("%.0f", r.OpsPerSec), ms3(r.P50Ms), ms3(r.P99Ms), ms3(r.MaxMs))
	}
	return t.Flush()
}

func ms3(v float64) string { return fmt.Sprintf("%.3f", v) }

// runBenchStep runs --requests operations of s from --clients connections
// with --pipeline operations in flight on each, and records each one's
// latency. With --pipeline above 1 each connection is a go-redis
// autopipeliner, which batches the operations of its goroutines into
// pipelines, as redis-benchmark -P does.
func runBenchStep(ctx context.Context, s benchStep, conns []redis.UniversalClient, o *benchOptions) (benchResult, error) {
	goroutines := o.clients * o.pipeline
	var next atomic.Int64
	lat := make([][]time.Duration, goroutines)
	errs := make([]error, goroutines)
	var wg sync.WaitGroup
	start := time.Now()
	for g := range goroutines {
		op := s.worker(conns[g/o.pipeline], g)
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := make([]time.Duration, 0, o.requests/goroutines+1)
			for next.Add(1) <= int64(o.requests) && ctx.Err() == nil {
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
		Step: s.name, Clients: o.clients, Pipeline: o.pipeline, Size: o.size, Preload: o.preload, Requests: len(all),
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
func benchConns(f *cmdutil.Factory, c redis.UniversalClient, o *benchOptions) ([]redis.UniversalClient, error) {
	conns := make([]redis.UniversalClient, o.clients)
	for i := range conns {
		if o.pipeline == 1 {
			conns[i] = c
			continue
		}
		own, err := conn.NewClient(f.Config(), f.IO, 1)
		if err != nil {
			return nil, err
		}
		f.OnClose(func() { own.Close() })
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
