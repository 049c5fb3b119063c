package stream_test

import (
	"errors"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/stream"
	"github.com/redis/go-redis/v9"
)

// accessOps is, per operation, the scripts it runs and the commands the
// client sends itself.
var accessOps = map[string]struct {
	scripts []string
	client  string
}{
	"Discover":   {nil, "scan xinfo|groups"},
	"Counts":     {[]string{"counts.lua"}, "xlen"},
	"Scan":       {[]string{"pending.lua"}, "xinfo|groups xrange"},
	"Get":        {[]string{"get.lua"}, "xrange"},
	"Recover":    {[]string{"claim.lua"}, ""},
	"Remove":     {[]string{"remove.lua"}, "xdel"},
	"DeadLetter": {[]string{"deadletter.lua"}, "xpending"},
	"Redrive":    {[]string{"redrive.lua"}, ""},
}

// callRE finds a call, redis.call('X', …), or a command built as a table
// ({'XADD', …}, run by redis.call(unpack(args)) or checked by allowed).
var callRE = regexp.MustCompile(`(?:redis\.p?call\(|\{)\s*'([A-Z]+)'(?:,\s*'([A-Z]+)')?`)

// scriptCalls are the commands a script calls, group.lua's included (as
// ACLs name them: XINFO GROUPS is xinfo|groups).
func scriptCalls(t *testing.T, name string) []string {
	t.Helper()
	var out []string
	for _, file := range []string{"group.lua", name} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range callRE.FindAllStringSubmatch(string(src), -1) {
			c := strings.ToLower(m[1])
			if c == "xinfo" {
				c += "|" + strings.ToLower(m[2])
			}
			out = append(out, c)
		}
	}
	return out
}

// Access lists exactly what each operation's scripts and client send.
func TestAccessListsScriptCalls(t *testing.T) {
	rows := stream.New(queues.Env{Prefix: "p:"}).Access()
	if len(rows) != len(accessOps) {
		t.Fatalf("%d rows, want %d", len(rows), len(accessOps))
	}
	for _, a := range rows {
		ops, ok := accessOps[a.Op]
		if !ok {
			t.Fatalf("no case for %s", a.Op)
		}
		want := strings.Fields(ops.client)
		for _, s := range ops.scripts {
			want = append(want, "evalsha", "eval", "script|load")
			want = append(want, scriptCalls(t, s)...)
		}
		slices.Sort(want)
		if want = slices.Compact(want); !slices.Equal(a.Commands, want) {
			t.Errorf("%s: lists %v, sends %v", a.Op, a.Commands, want)
		}
		if !slices.Equal(a.Keys, []string{"p:*"}) {
			t.Errorf("%s: keys %v", a.Op, a.Keys)
		}
	}
}

// accessFixture is a stream with entries ready, pending (idle), and in
// the dead-letter stream, and a run per operation of Access.
func accessFixture(t *testing.T) (*fixture, map[string]func(*redis.Client) error) {
	f := newFixture(t)
	ids := f.fill("s", 10)
	f.group("s", "g")
	f.read("s", "g", "c", 6)
	f.readFrom("s", "g", "c", 2, "0") // 2 delivered twice
	q := f.open("s", "g")
	if res, err := q.DeadLetter(f.ctx, queues.DeadLetterOptions{MinAttempts: 2, Max: 1}); err != nil || len(res.Done) != 1 {
		t.Fatal(res, err)
	}
	eventually(t, "entries idle", func() bool {
		p := f.pendingOf("s", "g", ids[5])
		return p != nil && p.Idle >= 2*time.Millisecond
	})
	as := func(c *redis.Client) *stream.Queue {
		q, err := stream.New(queues.Env{RDB: c, Prefix: f.prefix}).OpenQueue(stream.Name("s", "g"))
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	deadID := f.scan(q, queues.ScanOptions{State: queues.Dead})[0].ID
	return f, map[string]func(*redis.Client) error{
		"Discover": func(c *redis.Client) error {
			names, _, err := stream.New(queues.Env{RDB: c, Prefix: f.prefix}).Discover(f.ctx, 0, 100)
			if err == nil && len(names) != 1 {
				return errors.New("nothing discovered")
			}
			return err
		},
		"Counts": func(c *redis.Client) error { _, err := as(c).Counts(f.ctx); return err },
		"Scan": func(c *redis.Client) error {
			return as(c).Scan(f.ctx, queues.ScanOptions{}, func([]queues.Job) error { return nil })
		},
		"Get": func(c *redis.Client) error {
			for _, id := range []string{ids[1], ids[9], deadID, "1-1"} {
				if _, err := as(c).Get(f.ctx, id); err != nil && !errors.Is(err, queues.ErrJobNotFound) {
					return err
				}
			}
			return nil
		},
		"Recover": func(c *redis.Client) error {
			res, err := as(c).Recover(f.ctx, queues.RecoverOptions{Consumer: "r", IdleFor: time.Millisecond, Max: 1})
			if err == nil && len(res.Done) != 1 {
				return errors.New("nothing claimed")
			}
			return err
		},
		"Remove": func(c *redis.Client) error {
			res, err := as(c).Remove(f.ctx, []string{ids[5], deadID}, true)
			if err == nil && len(res.Done) != 2 {
				return errors.New("nothing removed")
			}
			return err
		},
		"DeadLetter": func(c *redis.Client) error {
			res, err := as(c).DeadLetter(f.ctx, queues.DeadLetterOptions{MinAttempts: 1, Max: 1})
			if err == nil && len(res.Done) != 1 {
				return errors.New("nothing dead-lettered")
			}
			return err
		},
		"Redrive": func(c *redis.Client) error {
			res, err := as(c).Redrive(f.ctx, 1)
			if err == nil && len(res.Done) != 1 {
				return errors.New("nothing redriven")
			}
			return err
		},
	}
}

// Each operation works as a user allowed only the commands Access lists
// for it, on the prefix's keys.
func TestAccessSuffices(t *testing.T) {
	for _, a := range stream.New(queues.Env{Prefix: "t:"}).Access() {
		t.Run(a.Op, func(t *testing.T) {
			f, run := accessFixture(t)
			rules := []any{"~t:*", "+hello", "+ping", "+auth"}
			for _, c := range a.Commands {
				rules = append(rules, "+"+c)
			}
			user := redistest.ACLUser(t, redistest.Backend{Name: "redis", Client: f.rdb, Prefix: f.prefix}, "chatqtest-"+strings.ToLower(a.Op), rules...)
			if err := run[a.Op](user); err != nil {
				t.Errorf("%s as a user allowed %v: %v", a.Op, a.Commands, err)
			}
		})
	}
}

// A write refused one of its write commands fails and changes nothing.
func TestAccessRefusals(t *testing.T) {
	f, run := accessFixture(t)
	var ops []redistest.Op
	for _, a := range f.kind.Access() {
		ops = append(ops, redistest.Op{Name: a.Op, Write: a.Write, Commands: a.Commands})
	}
	b := redistest.Backend{Name: "redis", Client: f.rdb, Prefix: f.prefix}
	redistest.Refusals(t, b, ops, []string{"xadd", "xack", "xdel", "xclaim", "xautoclaim"}, run, nil,
		func(op, cmd string) bool {
			// Recover's run claims by XAUTOCLAIM; XCLAIM is for ids.
			return op == "Recover" && cmd == "xclaim"
		})
}

// A refused write says so in the server's words (NOPERM), which chatq's
// commands map to a permission error.
func TestRefusalIsPermissionError(t *testing.T) {
	f, run := accessFixture(t)
	b := redistest.Backend{Name: "redis", Client: f.rdb, Prefix: f.prefix}
	for op, cmd := range map[string]string{"Remove": "xdel", "DeadLetter": "xadd", "Redrive": "xdel", "Recover": "xautoclaim"} {
		user := redistest.ACLUser(t, b, "chatqtest-perm-"+cmd, "~*", "&*", "+@all", "-"+cmd)
		if err := run[op](user); !conn.PermissionDenied(err) {
			t.Errorf("%s without %s: %v, want a permission error", op, cmd, err)
		}
	}
}
