package shardlist_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
)

// accessScripts are the scripts each method runs; state.lua is put in
// front of every one. A push or pop of a list written before the mid count
// existed also counts it (layout.lua) and stores the count (setmid.lua).
var accessScripts = map[string][]string{
	"LPush":  {"push.lua", "layout.lua", "setmid.lua"},
	"RPush":  {"push.lua", "layout.lua", "setmid.lua"},
	"LPop":   {"pop.lua", "layout.lua", "setmid.lua"},
	"RPop":   {"pop.lua", "layout.lua", "setmid.lua"},
	"BLPop":  {"pop.lua", "wake.lua", "layout.lua", "setmid.lua"},
	"BRPop":  {"pop.lua", "wake.lua", "layout.lua", "setmid.lua"},
	"LLen":   {"len.lua"},
	"Info":   {"len.lua"},
	"LRange": {"range.lua"},
	"Layout": {"layout.lua"},
	"Lists":  nil,
	"Delete": {"delete.lua", "layout.lua", "setmid.lua"},
}

// The Access table grants every command the scripts of each method call
// (a script runs with its caller's ACL), on the end the method works on.
func TestAccessCoversScripts(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never reached
	defer rdb.Close()
	table := shardlist.New(rdb, shardlist.Options{Prefix: "a*b:"}).Access()
	state := scriptCalls(t, "state.lua")
	used := map[string]bool{"state.lua": true}
	var ops []string
	for _, a := range table {
		ops = append(ops, a.Op)
		scripts, ok := accessScripts[a.Op]
		if !ok {
			t.Errorf("%s: no scripts listed for it in accessScripts", a.Op)
			continue
		}
		if !slices.IsSorted(a.Commands) || len(slices.Compact(slices.Clone(a.Commands))) != len(a.Commands) {
			t.Errorf("%s: commands not sorted and distinct: %v", a.Op, a.Commands)
		}
		side := ""
		switch {
		case slices.Contains([]string{"LPush", "LPop", "BLPop"}, a.Op):
			side = "left"
		case slices.Contains([]string{"RPush", "RPop", "BRPop"}, a.Op):
			side = "right"
		}
		var want []string
		if len(scripts) > 0 {
			want = append(want, "evalsha")
			want = append(want, state[""]...)
		}
		for _, f := range scripts {
			used[f] = true
			calls := scriptCalls(t, f)
			want = append(want, calls[""]...)
			if side != "" {
				want = append(want, calls[side]...)
			} else {
				want = append(want, calls["left"]...)
				want = append(want, calls["right"]...)
			}
		}
		for _, c := range want {
			if !slices.Contains(a.Commands, c) {
				t.Errorf("%s runs %v, which call %s: add it to Access", a.Op, scripts, c)
			}
		}
		for _, k := range a.Keys {
			if !strings.HasPrefix(k, `a\*b:`) {
				t.Errorf("%s: key pattern %q lacks the escaped prefix", a.Op, k)
			}
		}
		if a.Op != "Lists" && len(a.Keys) == 0 {
			t.Errorf("%s: no key patterns", a.Op)
		}
	}
	for op := range accessScripts {
		if !slices.Contains(ops, op) {
			t.Errorf("accessScripts lists %s, which Access does not", op)
		}
	}
	files, _ := filepath.Glob("*.lua")
	for _, f := range files {
		if !used[f] {
			t.Errorf("%s is run by no method of accessScripts", f)
		}
	}
}

var (
	callRE  = regexp.MustCompile(`redis\.p?call\(\s*([^,)]+)`)
	sideRE  = regexp.MustCompile(`^left and '([a-z]+)' or '([a-z]+)'$`)
	quoteRE = regexp.MustCompile(`^'([a-z]+)'$`)
)

// scriptCalls returns the commands a script calls: under "" those it
// always may, under "left" and "right" those of one end only (`left and
// 'lpush' or 'rpush'`, directly or through a local variable); with those
// of the functions of the records' prelude (luascript.Record) it calls.
func scriptCalls(t *testing.T, file string) map[string][]string {
	t.Helper()
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	prelude, err := os.ReadFile("../../internal/base/luascript/record.lua")
	if err != nil {
		t.Fatal(err)
	}
	for _, fn := range strings.Split(string(prelude), "\nlocal function ")[1:] {
		name, _, _ := strings.Cut(fn, "(")
		if regexp.MustCompile(`\b` + name + `\(`).Match(src) {
			for _, m := range callRE.FindAllStringSubmatch(fn, -1) {
				q := quoteRE.FindStringSubmatch(strings.ToLower(strings.TrimSpace(m[1])))
				if q == nil {
					t.Fatalf("record.lua: cannot tell which command redis.call(%s …) is", m[1])
				}
				out[""] = append(out[""], q[1])
			}
		}
	}
	for _, m := range callRE.FindAllStringSubmatch(string(src), -1) {
		expr := strings.TrimSpace(m[1])
		if v := regexp.MustCompile(`local ` + regexp.QuoteMeta(expr) + ` = (.+)`).FindStringSubmatch(string(src)); v != nil {
			expr = strings.TrimSpace(v[1])
		}
		expr = strings.ToLower(expr)
		if q := quoteRE.FindStringSubmatch(expr); q != nil {
			out[""] = append(out[""], q[1])
		} else if s := sideRE.FindStringSubmatch(expr); s != nil {
			out["left"] = append(out["left"], s[1])
			out["right"] = append(out["right"], s[2])
		} else {
			t.Errorf("%s: cannot tell which command redis.call(%s …) is", file, m[1])
		}
	}
	return out
}
