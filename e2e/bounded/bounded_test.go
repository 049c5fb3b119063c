// Package bounded_test proves that every chatq command does bounded work on
// the server: on the real redis-server named by CHATQ_TEST_REDIS_URL it loads
// a queue, a sharded list and a chat of CHATQ_TEST_BOUNDED_N items, and a
// reference set of a hundredth of that, logs every command in SLOWLOG, and
// runs each chatq command in process on both, interleaved. It fails when the
// same server call of a command took more than 10 ms, and more than ten
// times the command's worst call on the reference, on each of five runs: a
// busy machine slows one run, or both sets alike; work that grows with the
// data is slow every time, and about a hundred times slower than on the
// reference. scripts/bounded.sh runs it at several sizes and prints the
// worst time per call of each command.
package bounded_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/cmd"
	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/redis/go-redis/v9"
)

// limit is the most server time one call may take.
const limit = 10 * time.Millisecond

type harness struct {
	t      *testing.T
	ctx    context.Context
	rdb    *redis.Client
	url    string
	prefix string
	polled string              // a message received with a 1h vt, for queue get
	saved  map[string][]string // per queue restore saved: its keys that existed
}

// chatq runs one chatq command line in process and returns its stdout.
func (h *harness) chatq(stdin string, args ...string) (string, error) {
	var out, errOut bytes.Buffer
	io := &iostreams.IOStreams{In: strings.NewReader(stdin), Out: &out, ErrOut: &errOut}
	full := append([]string{"--url", h.url, "--prefix", h.prefix, "--timeout", "60s"}, args...)
	if code := cmd.Run(h.ctx, full, io, func(string) string { return "" }); code != 0 && code != 3 {
		return out.String(), fmt.Errorf("chatq %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String(), nil
}

func (h *harness) must(stdin string, args ...string) string {
	h.t.Helper()
	out, err := h.chatq(stdin, args...)
	if err != nil {
		h.t.Fatal(err)
	}
	return out
}

// call is one server call from the SLOWLOG.
type call struct {
	dur  time.Duration
	args []string
}

// calls returns the logged calls that touched the harness's keys since the
// last call, and clears the log.
func (h *harness) calls() []call {
	h.t.Helper()
	entries, err := h.rdb.SlowLogGet(h.ctx, -1).Result()
	if err != nil {
		h.t.Fatal(err)
	}
	if err := h.rdb.Do(h.ctx, "SLOWLOG", "RESET").Err(); err != nil {
		h.t.Fatal(err)
	}
	var out []call
	for _, e := range entries {
		for _, a := range e.Args {
			if strings.Contains(a, h.prefix) {
				out = append(out, call{e.Duration, e.Args})
				break
			}
		}
	}
	return out
}

func lines(n int, format string) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, format+"\n", i)
	}
	return b.String()
}

// importLines is an import of n messages of ids of their own, half of them
// received, for queue import.
func importLines(n int) string {
	var b strings.Builder
	for i := range n {
		rc := i % 2
		fmt.Fprintf(&b, `{"id":"0000000000imp%019d","message":"imported %d","due":1,"rc":%d}`+"\n", i, i, rc)
	}
	return b.String()
}

// load fills h's keys: a queue of n messages, a dead-letter queue, a
// sharded list of n items and a chat of min(n, 100000) messages.
func (h *harness) load(n int) {
	h.t.Helper()
	start := time.Now()
	// A queue of n messages: 40% ready, 40% delayed, 20% in flight.
	h.must("", "queue", "create", "big", "--vt", "1h")
	h.must("", "queue", "create", "dlq")
	h.must(lines(n*4/10, "ready %d"), "queue", "push", "big", "--lines", "-")
	h.must(lines(n*4/10, "delayed %d"), "queue", "push", "big", "--delay", "1h", "--lines", "-")
	for got := 0; got < n/5; got += 1000 {
		h.must("", "queue", "poll", "big", "-n", strconv.Itoa(min(1000, n/5-got)), "--vt", "1h")
	}
	var polled []struct{ ID string }
	if err := json.Unmarshal([]byte(h.must("", "-o", "json", "queue", "poll", "big", "--vt", "1h")), &polled); err != nil || len(polled) != 1 {
		h.t.Fatalf("poll: %v %v", polled, err)
	}
	h.polled = polled[0].ID
	// A dead-letter queue of n/10 messages, 1% of n of them in flight (for
	// queue redrive; the policy pointing to it is set by a step below).
	h.must(lines(n/10, "dead %d"), "queue", "push", "dlq", "--lines", "-")
	for got := 0; got < n/100; got += 1000 {
		h.must("", "queue", "poll", "dlq", "-n", strconv.Itoa(min(1000, n/100-got)), "--vt", "1h")
	}
	// A sharded list of n items.
	h.must(lines(n, "item %d"), "list", "rpush", "big", "-")
	// A chat of min(n, 100000) stored messages that jeff has not read.
	h.must("", "chat", "create", "--id", "big", "--from", "joe", "--to", "jeff,jenny", "first")
	store := chat.New(h.rdb, chat.Options{Prefix: h.prefix})
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	next := make(chan int)
	for range 32 {
		wg.Go(func() {
			for i := range next {
				if _, err := store.Send(h.ctx, "big", "joe", "message "+strconv.Itoa(i)); err != nil {
					select {
					case errs <- err:
					default:
					}
				}
			}
		})
	}
	for i := range min(n, 100000) - 1 {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		h.t.Fatal(err)
	}
	h.t.Logf("%s: loaded %d items per structure in %s", h.prefix, n, time.Since(start).Round(time.Millisecond))
}

// step is one command measured: its arguments, stdin, and an optional
// prep, run unmeasured before each run of the step: it puts back what the
// previous run consumed and returns arguments to append (an id to ack).
type step struct {
	name  string
	args  []string
	stdin string
	prep  func(h *harness) []string
}

// ratio is how much slower than the reference run a call over the limit must
// be to count: the reference holds a hundredth of the data, so a call whose
// work grows with the data is about 100 times slower there, while a bounded
// call slowed down by a busy machine is slowed down in both.
const ratio = 10

func TestBounded(t *testing.T) {
	url := os.Getenv("CHATQ_TEST_REDIS_URL")
	nStr := os.Getenv("CHATQ_TEST_BOUNDED_N")
	if url == "" || nStr == "" {
		t.Skip("set CHATQ_TEST_REDIS_URL and CHATQ_TEST_BOUNDED_N (items per structure) to run")
	}
	n, err := strconv.Atoi(nStr)
	if err != nil || n < 100 {
		t.Fatalf("CHATQ_TEST_BOUNDED_N=%q: want a number of at least 100", nStr)
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	ctx := t.Context()
	// big holds n items per structure, ref a hundredth of that: the same
	// steps run on both, interleaved, so that a busy machine slows both.
	big := &harness{t: t, ctx: ctx, rdb: rdb, url: url, prefix: keyspace.UniquePrefix("chatq-bounded")}
	ref := &harness{t: t, ctx: ctx, rdb: rdb, url: url, prefix: keyspace.UniquePrefix("chatq-bounded-ref")}
	for _, h := range []*harness{big, ref} {
		defer func() {
			if err := keyspace.DeletePrefix(context.Background(), rdb, h.prefix); err != nil {
				t.Errorf("cleanup: %v", err)
			}
		}()
	}
	big.load(n)
	ref.load(max(100, n/100))

	// Log every call from here on.
	var saved []any
	for _, k := range []string{"slowlog-log-slower-than", "slowlog-max-len"} {
		v, err := rdb.ConfigGet(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		saved = append(saved, k, v[k])
	}
	defer rdb.ConfigSet(context.Background(), saved[0].(string), saved[1].(string))
	defer rdb.ConfigSet(context.Background(), saved[2].(string), saved[3].(string))
	for k, v := range map[string]string{"slowlog-log-slower-than": "0", "slowlog-max-len": "100000"} {
		if err := rdb.ConfigSet(ctx, k, v).Err(); err != nil {
			t.Fatal(err)
		}
	}
	big.calls()

	pollOne := func(h *harness) []string {
		var got []struct{ ID string }
		if err := json.Unmarshal([]byte(h.must("", "-o", "json", "queue", "poll", "big", "--vt", "1h")), &got); err != nil || len(got) != 1 {
			h.t.Fatalf("poll: %v %v", got, err)
		}
		return []string{got[0].ID}
	}
	// pollHundred receives up to 100 messages for an hour and returns
	// their receipts, for queue retry (which makes them due again).
	pollHundred := func(h *harness) []string {
		var got []struct{ Receipt string }
		if err := json.Unmarshal([]byte(h.must("", "-o", "json", "queue", "poll", "big", "-n", "100", "--vt", "1h")), &got); err != nil || len(got) == 0 {
			h.t.Fatalf("poll: %d %v", len(got), err)
		}
		var out []string
		for _, m := range got {
			out = append(out, m.Receipt)
		}
		return out
	}
	steps := []step{
		{name: "queue stats", args: []string{"queue", "stats", "big"}},
		{name: "queue peek", args: []string{"queue", "peek", "big"}},
		{name: "queue peek -n 1000", args: []string{"queue", "peek", "big", "-n", "1000"}},
		{name: "queue ls", args: []string{"queue", "ls"}},
		{name: "queue ls -l", args: []string{"queue", "ls", "-l"}},
		{name: "queue push", args: []string{"queue", "push", "big", "one more"}},
		{name: "queue push --lines", args: []string{"queue", "push", "big", "--lines", "-"}, stdin: lines(1000, "bulk %d")},
		{name: "queue push --jsonl", args: []string{"queue", "push", "big", "--jsonl", "-"}, stdin: lines(1000, `{"message":"jsonl %d","delay":"1s"}`)},
		{name: "queue export", args: []string{"queue", "export", "big"}},
		{name: "queue import", args: []string{"queue", "import", "big", "-"}, stdin: importLines(1000)},
		{name: "queue poll", args: []string{"queue", "poll", "big", "-n", "10"}},
		{name: "queue ack", args: []string{"queue", "ack", "big"}, prep: pollOne},
		{name: "queue retry", args: []string{"queue", "retry", "big"}, prep: pollOne},
		{name: "queue set", args: []string{"queue", "set", "big", "--max-receives", "5", "--dead-letter", "dlq"}},
		{name: "queue get", args: []string{"queue", "get", "big"}, prep: func(h *harness) []string { return []string{h.polled} }},
		{name: "queue peek --state ready", args: []string{"queue", "peek", "big", "--state", "ready", "-n", "100"}},
		{name: "queue peek --state delayed", args: []string{"queue", "peek", "big", "--state", "delayed", "-n", "100"}},
		{name: "queue peek --state inflight", args: []string{"queue", "peek", "big", "--state", "inflight", "-n", "100"}},
		{name: "queue peek --older-than 1h (matches none: walks the queue)", args: []string{"queue", "peek", "big", "--older-than", "1h"}},
		{name: "queue peek --grep (matches none: walks the queue)", args: []string{"queue", "peek", "big", "--grep", "no such text"}},
		{name: "queue peek --grep --regexp (matches none: walks the queue)", args: []string{"queue", "peek", "big", "--grep", "no such [t]ext", "--regexp"}},
		{name: "queue export --grep (matches none)", args: []string{"queue", "export", "big", "--grep", "no such text"}},
		{name: "queue peek --inflight-for 1h (matches none)", args: []string{"queue", "peek", "big", "--inflight-for", "1h"}},
		{name: "queue peek --min-receives 1 -n 100", args: []string{"queue", "peek", "big", "--min-receives", "1", "-n", "100"}},
		{name: "queue retry (100 receipts)", args: []string{"queue", "retry", "big"}, prep: pollHundred},
		{name: "queue retry --min-receives 1 -n 100 (a selection)", args: []string{"queue", "retry", "big", "--min-receives", "1", "-n", "100", "--delay", "1h"}},
		{name: "queue redrive -n 1000 (destination from the registry)", args: []string{"queue", "redrive", "dlq", "-n", "1000"}},
		{name: "queue redrive --to (the rest, past the in-flight ones)", args: []string{"queue", "redrive", "dlq", "--to", "big"}},
		{name: "queue completion", args: []string{"__complete", "queue", "stats", ""}},
		{name: "list llen", args: []string{"list", "llen", "big"}},
		{name: "list lrange 0 99", args: []string{"list", "lrange", "big", "0", "99"}},
		{name: "list lrange 0 -1", args: []string{"list", "lrange", "big", "0", "-1"}},
		{name: "list shards", args: []string{"list", "shards", "big"}},
		{name: "list lpush", args: []string{"list", "lpush", "big", "x"}},
		{name: "list rpush -", args: []string{"list", "rpush", "big", "-"}, stdin: lines(1000, "more %d")},
		{name: "list lpop", args: []string{"list", "lpop", "big", "-n", "10"}},
		{name: "list rpop", args: []string{"list", "rpop", "big"}},
		{name: "list blpop", args: []string{"list", "blpop", "big"}},
		{name: "list completion", args: []string{"__complete", "list", "llen", ""}},
		{name: "chat history", args: []string{"chat", "history", "big"}},
		{name: "chat history --grep (matches none)", args: []string{"chat", "history", "big", "--grep", "no such text"}},
		{name: "chat members", args: []string{"chat", "members", "big"}},
		{name: "chat ls", args: []string{"chat", "ls", "jeff"}},
		{name: "chat send", args: []string{"chat", "send", "big", "--from", "jenny", "hello"}},
		{name: "chat pending --peek", args: []string{"chat", "pending", "jeff", "--peek"}},
		{name: "chat pending", args: []string{"chat", "pending", "jeff"}},
		{name: "chat join", args: []string{"chat", "join", "big", "jack"}, prep: func(h *harness) []string {
			_, _ = h.chatq("", "chat", "leave", "big", "jack")
			return nil
		}},
		{name: "chat leave", args: []string{"chat", "leave", "big", "jack"}, prep: func(h *harness) []string {
			_, _ = h.chatq("", "chat", "join", "big", "jack")
			return nil
		}},
		{name: "chat completion", args: []string{"__complete", "chat", "members", ""}},
		{name: "top --once", args: []string{"top", "--once", "--interval", "0"}},
		{name: "metrics", args: []string{"metrics"}},
		{name: "queue check", args: []string{"queue", "check", "big", "dlq", "--max-ready", "1000000000", "--max-oldest", "1000000h", "--max-inflight", "1000000000", "--max-dead", "1000000000"}},
		{name: "queue purge", args: []string{"queue", "purge", "big", "--force"}, prep: func(h *harness) []string {
			h.restore("big")
			return nil
		}},
		{name: "queue delete", args: []string{"queue", "delete", "dlq", "--force"}, prep: func(h *harness) []string {
			h.restore("dlq")
			return nil
		}},
	}
	var report strings.Builder
	fmt.Fprintf(&report, "| command | commands logged (a script's own included) | worst call (µs) at n=%d |\n| --- | --- | --- |\n", n)
	for _, s := range steps {
		refWorst := worst(ref.run(s))
		runs := [][]call{big.run(s)}
		// A bounded call over the limit on a busy machine is noise; a call
		// whose work grows with the data is over it on every run, and far
		// slower than on the reference. Rerun (interleaved with the
		// reference) while some call is both, up to five runs in all.
		for len(runs) < 5 && suspect(runs, refWorst) != nil {
			refWorst = max(refWorst, worst(ref.run(s)))
			runs = append(runs, big.run(s))
		}
		if c := suspect(runs, refWorst); c != nil {
			t.Errorf("%s: a server call took %s on each of %d runs (limit %s), the worst call at a hundredth of the data %s: %s",
				s.name, c.dur, len(runs), limit, refWorst, strings.Join(shorten(c.args), " "))
		}
		fmt.Fprintf(&report, "| `%s` | %d | %d |\n", s.name, len(runs[0]), worst(runs[0]).Microseconds())
	}
	t.Log("\n" + report.String())
	if path := os.Getenv("CHATQ_BOUNDED_REPORT"); path != "" {
		if err := os.WriteFile(path, []byte(report.String()), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// suspect returns the first call that was over the limit and over ratio
// times refWorst in every run, comparing the runs' calls position by
// position (a step makes the same calls in the same order each run; where a
// rerun made fewer, the positions past its end are not confirmed), with its
// fastest duration; nil when there is none.
func suspect(runs [][]call, refWorst time.Duration) *call {
	n := len(runs[0])
	for _, r := range runs[1:] {
		n = min(n, len(r))
	}
	for i := range n {
		c := runs[0][i]
		for _, r := range runs[1:] {
			if r[i].dur < c.dur {
				c.dur = r[i].dur
			}
		}
		if c.dur > limit && c.dur > ratio*refWorst {
			return &c
		}
	}
	return nil
}

// run runs s (after its prep) and returns the server calls it made,
// in order.
func (h *harness) run(s step) []call {
	h.t.Helper()
	args := s.args
	if s.prep != nil {
		args = append(slices.Clone(args), s.prep(h)...)
		h.calls()
	}
	if _, err := h.chatq(s.stdin, args...); err != nil {
		h.t.Errorf("%s: %v", s.name, err)
	}
	return h.calls()
}

// worst returns the longest of cs.
func worst(cs []call) time.Duration {
	var w time.Duration
	for _, c := range cs {
		w = max(w, c.dur)
	}
	return w
}

// restore puts queue q back as it was when restore was first called for it
// (that call saves it): its keys copied back from the saved copies (those
// that did not exist then deleted), and its name back in the registry.
func (h *harness) restore(q string) {
	h.t.Helper()
	ns := h.prefix + "rsmq:"
	keys := []string{ns + q, ns + q + ":Q", ns + q + ":R"}
	kept, saved := h.saved[q]
	for _, k := range keys {
		var err error
		switch {
		case !saved:
			var n int64
			if n, err = h.rdb.Copy(h.ctx, k, k+":saved-by-test", 0, false).Result(); n == 1 {
				kept = append(kept, k)
			}
		case slices.Contains(kept, k):
			err = h.rdb.Copy(h.ctx, k+":saved-by-test", k, 0, true).Err()
		default:
			err = h.rdb.Del(h.ctx, k).Err()
		}
		if err != nil {
			h.t.Fatal(err)
		}
	}
	if !saved {
		if h.saved == nil {
			h.saved = map[string][]string{}
		}
		h.saved[q] = kept
	}
	if err := h.rdb.SAdd(h.ctx, ns+"QUEUES", q).Err(); err != nil {
		h.t.Fatal(err)
	}
}

func shorten(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		if len(a) > 40 {
			a = a[:37] + "..."
		}
		out[i] = a
	}
	return out
}
