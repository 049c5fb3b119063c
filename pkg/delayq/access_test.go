package delayq_test

import (
	"context"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/redis/go-redis/v9"
)

// accessOps is, per operation of Access, the scripts it runs and the
// commands the client sends itself (besides the script commands).
var accessOps = map[string]struct {
	scripts []string
	client  string
}{
	"Create":            {[]string{"create.lua"}, "exists type sadd multi discard"},
	"SetAttributes":     {[]string{"set.lua"}, "exists"},
	"Stats":             {[]string{"stats.lua"}, "hexists"},
	"StatsEach":         {[]string{"stats.lua"}, "hexists"},
	"Reindex":           {[]string{"reindex_begin.lua", "reindex_step.lua", "reindex_end.lua"}, ""},
	"Queues":            {nil, "sscan"},
	"DeadLetterSources": {nil, "sscan hget"},
	"Delete":            {[]string{"delete.lua"}, "type srem multi discard"},
	"Purge":             {[]string{"purge.lua"}, ""},
	"Push":              {[]string{"push.lua"}, ""},
	"PushMany":          {[]string{"stats.lua", "pushmany.lua"}, "hexists"},
	"Receive":           {[]string{"receive.lua", "retry.lua"}, ""},
	"Receive (wait)":    {[]string{"receive.lua", "retry.lua"}, "subscribe"},
	"Ack":               {[]string{"ack.lua"}, ""},
	"ChangeVisibility":  {[]string{"retry.lua"}, ""},
	"Retry":             {[]string{"retry.lua"}, ""},
	"Peek":              {[]string{"peek.lua"}, ""},
	"Get":               {[]string{"get.lua"}, ""},
	"Redrive":           {[]string{"redrive.lua"}, "sscan hget"},
	"Export":            {[]string{"export.lua"}, ""},
	"Import":            {[]string{"stats.lua", "import.lua"}, "hexists"},
	"Work":              {[]string{"stats.lua", "receive.lua", "retry.lua", "ack.lua"}, "hexists subscribe"},
}

var callRE = regexp.MustCompile(`redis\.p?call\(\s*['"]([A-Za-z]+)['"]`)

// scriptCalls returns the Redis commands a script calls: its text's, and
// those of the preludes' functions (queue.lua, record.lua) that it calls,
// followed through the functions they call in turn.
func scriptCalls(t *testing.T, name string) []string {
	t.Helper()
	read := func(name string) string {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(src)
	}
	calls := func(src string) []string {
		var out []string
		for _, m := range callRE.FindAllStringSubmatch(src, -1) {
			out = append(out, strings.ToLower(m[1]))
		}
		return out
	}
	fns := map[string]string{} // a prelude function's name -> its text
	for _, prelude := range []string{"queue.lua", "../../internal/base/luascript/record.lua"} {
		parts := strings.Split(read(prelude), "\nlocal function ")
		if len(calls(parts[0])) > 0 {
			t.Fatalf("%s calls Redis outside its functions", prelude)
		}
		for _, fn := range parts[1:] {
			name, _, _ := strings.Cut(fn, "(")
			fns[name] = fn
		}
	}
	var out []string
	seen := map[string]bool{}
	for todo := []string{read(name)}; len(todo) > 0; {
		src := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		out = append(out, calls(src)...)
		for fn, text := range fns {
			if !seen[fn] && regexp.MustCompile(`\b`+fn+`\(`).MatchString(src) {
				seen[fn] = true
				todo = append(todo, text)
			}
		}
	}
	return out
}

// Access lists, per operation, exactly the commands of its scripts and the
// client's own, and every script is some operation's.
func TestAccessMatchesScripts(t *testing.T) {
	access := delayq.New(nil, delayq.Options{}).Access()
	seen := map[string]bool{}
	run := map[string]bool{}
	for _, a := range access {
		seen[a.Op] = true
		op, ok := accessOps[a.Op]
		if !ok {
			t.Errorf("Access lists %q, which this test does not know", a.Op)
			continue
		}
		want := map[string]bool{}
		for _, s := range op.scripts {
			run[s] = true
			for _, c := range scriptCalls(t, s) {
				want[c] = true
			}
		}
		for _, c := range strings.Fields(op.client) {
			want[c] = true
		}
		if got := slices.Sorted(maps.Keys(want)); !slices.Equal(a.Commands, got) {
			t.Errorf("Access of %s lists %v; its scripts and client send %v", a.Op, a.Commands, got)
		}
		if !slices.IsSorted(a.Commands) {
			t.Errorf("Access of %s: commands not sorted: %v", a.Op, a.Commands)
		}
		pubsub := want["publish"] || want["subscribe"]
		if (len(a.Channels) > 0) != pubsub {
			t.Errorf("Access of %s: channels %v, but publish or subscribe: %v", a.Op, a.Channels, pubsub)
		}
		write := false
		for c := range want {
			write = write || slices.Contains([]string{"hset", "hdel", "hincrby", "zadd", "zrem", "unlink", "sadd", "srem", "publish"}, c)
		}
		if a.Write != write {
			t.Errorf("Access of %s: write %v, but its commands %v", a.Op, a.Write, a.Commands)
		}
	}
	for op := range accessOps {
		if !seen[op] {
			t.Errorf("Access does not list %s", op)
		}
	}
	files, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f.Name(), ".lua") && f.Name() != "queue.lua" && !run[f.Name()] {
			t.Errorf("%s is run by no operation of Access", f.Name())
		}
	}
}

// The patterns cover the keys and channels, with the prefix and namespace
// glob-escaped.
func TestAccessPatterns(t *testing.T) {
	for _, a := range delayq.New(nil, delayq.Options{Prefix: "a*b:", Namespace: "n[s]"}).Access() {
		if !slices.Equal(a.Keys, []string{`a\*b:n\[s\]:*`}) {
			t.Errorf("%s: keys %v", a.Op, a.Keys)
		}
		if a.Channels != nil && !slices.Equal(a.Channels, []string{`a\*b:n\[s\]:rt:*`}) {
			t.Errorf("%s: channels %v", a.Op, a.Channels)
		}
	}
}

// recorder records the commands each operation sends itself.
type recorder struct {
	mu   sync.Mutex
	op   string
	sent map[string]map[string]bool
}

func (r *recorder) note(cmds ...redis.Cmder) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range cmds {
		name := c.Name()
		switch name {
		case "evalsha", "eval", "script": // the script commands
			continue
		case "hello", "ping", "client": // a new connection's (CLIENT SETINFO)
			continue
		}
		if r.sent[r.op] == nil {
			r.sent[r.op] = map[string]bool{}
		}
		r.sent[r.op][name] = true
	}
}

func (r *recorder) DialHook(next redis.DialHook) redis.DialHook { return next }
func (r *recorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { r.note(cmd); return next(ctx, cmd) }
}
func (r *recorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { r.note(cmds...); return next(ctx, cmds) }
}

// What each operation sends itself is in its Access.
func TestAccessClientCommands(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		rec := &recorder{sent: map[string]map[string]bool{}}
		rdb := redis.NewClient(b.Client.Options())
		defer rdb.Close()
		rdb.AddHook(rec)
		c := delayq.New(rdb, delayq.Options{Prefix: b.Prefix})
		done := map[string]bool{}
		do := func(op string, f func() error) {
			t.Helper()
			done[op] = true
			rec.mu.Lock()
			rec.op = op
			rec.mu.Unlock()
			if err := f(); err != nil {
				t.Fatalf("%s: %v", op, err)
			}
		}
		do("Create", func() error { return c.Create(ctx, "dead", delayq.Attributes{}) })
		do("Create", func() error { return c.Create(ctx, "q", delayq.Attributes{MaxReceives: 1, DeadLetter: "dead"}) })
		do("SetAttributes", func() error { return c.SetAttributes(ctx, "q", delayq.Attributes{MaxReceives: 1, DeadLetter: "dead"}) })
		var id string
		do("Push", func() error { p, err := c.Push(ctx, "q", "x", delayq.PushOptions{}); id = p.ID; return err })
		do("PushMany", func() error { _, err := c.PushMany(ctx, "q", []string{"y", "z"}, delayq.PushManyOptions{}); return err })
		do("Stats", func() error { _, err := c.Stats(ctx, "q"); return err })
		do("StatsEach", func() error { _, err := c.StatsEach(ctx, []string{"q", "dead"}); return err })
		do("Reindex", func() error { return c.Reindex(ctx, "q") })
		do("Queues", func() error { _, _, err := c.Queues(ctx, 0, "", 10); return err })
		do("DeadLetterSources", func() error { _, err := c.DeadLetterSources(ctx, "dead"); return err })
		do("Peek", func() error { _, err := c.Peek(ctx, "q", delayq.PeekOptions{N: 5}); return err })
		do("Get", func() error { _, err := c.Get(ctx, "q", id); return err })
		var m []delayq.Message
		do("Receive", func() error {
			var err error
			m, err = c.Receive(ctx, "q", delayq.ReceiveOptions{VT: time.Hour})
			return err
		})
		do("ChangeVisibility", func() error { _, err := c.ChangeVisibility(ctx, "q", m[0].Receipt, time.Hour); return err })
		do("Retry", func() error { _, err := c.Retry(ctx, "q", 0, m[0].Receipt); return err })
		do("Receive", func() error { _, err := c.Receive(ctx, "q", delayq.ReceiveOptions{}); return err }) // moves it
		do("Receive (wait)", func() error {
			_, err := c.Receive(ctx, "q", delayq.ReceiveOptions{Wait: 50 * time.Millisecond})
			return err
		})
		do("Redrive", func() error { _, err := c.Redrive(ctx, "dead", delayq.RedriveOptions{}); return err })
		do("Export", func() error {
			_, err := c.Export(ctx, "q", delayq.PeekOptions{}, func(ms []delayq.Message) error { m = ms; return nil })
			return err
		})
		do("Import", func() error { _, err := c.Import(ctx, "dead", seq(m)); return err })
		do("Ack", func() error { _, err := c.Ack(ctx, "q", id); return err })
		do("Work", func() error {
			wctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
			defer cancel()
			return c.Work(wctx, "dead", delayq.WorkOptions{}, func(context.Context, delayq.Message) error { return nil })
		})
		do("Purge", func() error { _, err := c.Purge(ctx, "dead", -1); return err })
		do("Delete", func() error { _, err := c.Delete(ctx, "q", -1); return err })
		access := map[string][]string{}
		for _, a := range c.Access() {
			access[a.Op] = a.Commands
		}
		for op, sent := range rec.sent {
			for cmd := range sent {
				if !slices.Contains(access[op], cmd) {
					t.Errorf("%s sent %s, which its Access does not list (%v)", op, cmd, access[op])
				}
			}
		}
		for op := range accessOps {
			if !done[op] {
				t.Errorf("%s was not exercised", op)
			}
		}
	})
}
