package bench

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/cmdtest"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

func TestPercentileMs(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, tt := range []struct {
		q    float64
		want float64
	}{{0.5, 50}, {0.99, 99}, {1, 100}, {0, 1}} {
		if got := percentileMs(d, tt.q); got != tt.want {
			t.Errorf("q=%v: got %v, want %v", tt.q, got, tt.want)
		}
	}
	if got := percentileMs(nil, 0.5); got != 0 {
		t.Errorf("empty: got %v", got)
	}
}

// BenchmarkStep is the client's cost of one operation of each step, one
// client, as `chatq bench` runs it (chatq's client and hooks): the
// allocations per op, and, with -cpuprofile, where the client's CPU goes.
// On the embedded server unless CHATQ_TEST_REDIS_URL names a real one (use
// a real one to profile: the embedded server runs in this process).
func BenchmarkStep(b *testing.B) {
	be := redistest.Embedded(b)
	if os.Getenv("CHATQ_TEST_REDIS_URL") != "" {
		be = redistest.Real(b)
	}
	ctx := context.Background()
	cfg := &conn.Config{URL: be.URL, Timeout: 3 * time.Second}
	c, err := conn.NewClient(cfg, &iostreams.IOStreams{ErrOut: io.Discard}, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	o := &benchOptions{Clients: 1, Pipeline: 1, Requests: 1, Size: 16}
	for _, pattern := range []string{"ping", "list", "queue", "chat"} {
		steps, err := benchWorkloads()[pattern](ctx, c, be.Prefix+"b"+pattern+":", o)
		if err != nil {
			b.Fatal(err)
		}
		for _, s := range steps {
			if s.name == "poll" || s.name == "ack" || s.name == "pending" {
				continue // they need what an earlier step left
			}
			b.Run(pattern+"_"+s.name, func(b *testing.B) {
				op := s.worker(c, 0)
				b.ReportAllocs()
				for b.Loop() {
					if err := op(ctx); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func TestBenchFlags(t *testing.T) {
	defaults := benchOptions{Pattern: "ping", Clients: 50, Requests: 100000, Pipeline: 1, Size: 16, Threads: 1, Prefix: "p:"}
	for _, tc := range []struct {
		args    []string
		cluster bool
		want    *benchOptions // nil: a usage error
	}{
		{args: []string{"bench", "ping"}, want: &defaults},
		{args: []string{"bench", "queue", "-c", "2", "-n", "10", "-P", "4", "-d", "8", "--preload", "5", "--threads", "3", "--force"},
			want: &benchOptions{Pattern: "queue", Clients: 2, Requests: 10, Pipeline: 4, Size: 8, Preload: 5, Threads: 3, Force: true, Prefix: "p:"}},
		{args: []string{"bench", "list", "--clients", "1"}, cluster: true,
			want: &benchOptions{Pattern: "list", Clients: 1, Requests: 100000, Pipeline: 1, Size: 16, Threads: 1, Prefix: "p:", Cluster: true}},
		{args: []string{"bench"}},
		{args: []string{"bench", "ping", "chat"}},
		{args: []string{"bench", "nope"}},
		{args: []string{"bench", "ping", "-c", "0"}},
		{args: []string{"bench", "ping", "-n", "0"}},
		{args: []string{"bench", "ping", "-P", "0"}},
		{args: []string{"bench", "ping", "-d", "0"}},
		{args: []string{"bench", "ping", "--preload", "-1"}},
		{args: []string{"bench", "ping", "--threads", "0"}},
		{args: []string{"bench", "ping", "--clients", "many"}},
		{args: []string{"bench", "ping", "-P", "2"}, cluster: true},
	} {
		f := cmdtest.Factory(&conn.Config{Prefix: "p:", Cluster: tc.cluster}, nil)
		o, err := cmdtest.Parse(t, cmdtest.Root(), f, NewCmdBench, tc.args...)
		if tc.want == nil {
			if !cmdtest.IsUsage(err) {
				t.Errorf("%q: %v, want a usage error", tc.args, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if o.IO == nil || o.Client == nil || o.Conn == nil {
			t.Errorf("%q: no streams or client constructors", tc.args)
		}
		o.IO, o.Client, o.Conn = nil, nil, nil
		if !reflect.DeepEqual(*o, *tc.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.args, *o, *tc.want)
		}
	}
}

// benchOn returns bench's options on b for pattern; Conn counts the
// clients of their own it builds.
func benchOn(t *testing.T, b redistest.Backend, io *iostreams.IOStreams, pattern string, conns *int) *benchOptions {
	return &benchOptions{Output: cmdutil.Output{IO: io}, Pattern: pattern, Clients: 2, Requests: 20, Pipeline: 1, Size: 8, Threads: 1, Prefix: b.Prefix,
		Client: func() (redis.UniversalClient, error) { return b.Client, nil },
		Conn: func() (redis.UniversalClient, error) {
			opt, err := redis.ParseURL(b.URL)
			if err != nil {
				return nil, err
			}
			c := redis.NewClient(opt)
			t.Cleanup(func() { c.Close() })
			*conns++
			return c, nil
		}}
}

// noBenchKeys fails t if a benchmark left keys behind.
func noBenchKeys(t *testing.T, b redistest.Backend) {
	t.Helper()
	if left, err := keyspace.AnyWithPrefix(context.Background(), b.Client, b.Prefix+benchPrefix); err != nil || left {
		t.Errorf("keys left under %s%s: %v, %v", b.Prefix, benchPrefix, left, err)
	}
}

func TestBenchRun(t *testing.T) { redistest.Run(t, testBenchRun) }

func testBenchRun(t *testing.T, b redistest.Backend) {
	ctx := context.Background()
	var conns int
	for _, m := range []struct {
		name string
		tty  bool
	}{{"terminal", true}, {"piped", false}} {
		io, out, errOut := iostreams.Test(m.tty, "")
		if err := benchRun(ctx, benchOn(t, b, io, "ping", &conns)); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		row := lines[0]
		if m.tty {
			// A header, aligned columns, and what runs on stderr.
			if len(lines) != 2 || strings.Join(strings.Fields(lines[0]), " ") != "STEP CLIENTS PIPELINE SIZE PRELOAD REQUESTS OPS/S P50 MS P99 MS MAX MS" {
				t.Errorf("%s: %q", m.name, out)
			}
			if errOut.String() != "chatq: bench ping ping: 20 requests from 2 clients...\n" {
				t.Errorf("%s: stderr %q", m.name, errOut)
			}
			row = strings.Join(strings.Fields(lines[1]), "\t")
			row = strings.Replace(row, "ping\tping", "ping ping", 1)
		} else if len(lines) != 1 || errOut.Len() != 0 {
			t.Errorf("%s: stdout %q, stderr %q", m.name, out, errOut)
		}
		cells := strings.Split(row, "\t")
		if len(cells) != 10 || strings.Join(cells[:6], ",") != "ping ping,2,1,8,0,20" {
			t.Errorf("%s: row %q", m.name, row)
		}
	}
	noBenchKeys(t, b)

	// JSON, and a pipelined benchmark: a client of its own per bench
	// client, every step run, nothing left.
	io, out, _ := iostreams.Test(false, "")
	o := benchOn(t, b, io, "queue", &conns)
	o.JSON, o.Pipeline = true, 2
	if err := benchRun(ctx, o); err != nil {
		t.Fatal(err)
	}
	var res []benchResult
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || len(res) != 3 {
		t.Fatalf("JSON %q: %v", out, err)
	}
	for i, step := range []string{"push", "poll", "ack"} {
		if r := res[i]; r.Pattern != "queue" || r.Step != step || r.Clients != 2 || r.Pipeline != 2 || r.Requests != 20 || r.OpsPerSec <= 0 {
			t.Errorf("step %d: %+v", i, r)
		}
	}
	if conns != 2 {
		t.Errorf("%d clients of their own built, want 2 (one per bench client)", conns)
	}
	noBenchKeys(t, b)
}

// Keys under the benchmark's prefix stop it before it writes, unless
// --force, which deletes them after.
func TestBenchBusyPrefix(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		left := b.Prefix + benchPrefix + "left"
		if err := b.Client.Set(ctx, left, "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
		var conns int
		io, out, _ := iostreams.Test(false, "")
		err := benchRun(ctx, benchOn(t, b, io, "list", &conns))
		var h *cmdutil.HintError
		if err == nil || !errors.As(err, &h) || !strings.Contains(h.Hint(), "--force") || out.Len() != 0 {
			t.Fatalf("busy prefix: %v, printed %q", err, out)
		}
		if n, err := b.Client.Exists(ctx, left).Result(); err != nil || n != 1 {
			t.Errorf("the refused benchmark touched %s: %v %v", left, n, err)
		}
		o := benchOn(t, b, io, "list", &conns)
		o.Force = true
		if err := benchRun(ctx, o); err != nil {
			t.Fatal(err)
		}
		noBenchKeys(t, b)
	})
}
