package chat_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/redis/go-redis/v9"
)

// accessScripts are the scripts each method runs (lib.lua is mark.lua's
// and marks.lua's prelude: mark() and its calls).
var accessScripts = map[string][]string{
	"Create":         {"create.lua", "newid.lua"},
	"Send":           {"send.lua"},
	"Join":           {"join.lua"},
	"Leave":          {"leave.lua", "trim.lua"},
	"Pending":        {"fetch.lua", "lib.lua", "mark.lua", "marks.lua", "trim.lua"},
	"Pending (peek)": {"fetch.lua"},
	"MarkSeen":       {"lib.lua", "mark.lua", "marks.lua", "trim.lua"},
	"Watch":          {"fetch.lua"},
	"Watch (mark)":   {"fetch.lua", "lib.lua", "mark.lua", "marks.lua", "trim.lua"},
	"UserChats":      {"fetch.lua"},
	"Members":        {"members.lua"},
	"History":        nil,
	"Stats":          nil,
	"Chats":          nil,
	"Users":          nil,
}

var callRE = regexp.MustCompile(`redis\.p?call\(\s*['"]([A-Za-z|]+)['"]`)

// The Access table grants every command the scripts of each method call
// (a script runs with its caller's ACL), those of the records' prelude
// included, and names every script.
func TestAccessCoversScripts(t *testing.T) {
	rdb := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never reached
	defer rdb.Close()
	table := chat.New(rdb, chat.Options{Prefix: "a*b:"}).Access()
	prelude, err := os.ReadFile("../../internal/base/luascript/record.lua")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
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
		var want []string
		if len(scripts) > 0 {
			want = append(want, "evalsha")
		}
		for _, f := range scripts {
			used[f] = true
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range callRE.FindAllStringSubmatch(string(src), -1) {
				want = append(want, strings.ToLower(m[1]))
			}
			// The records' prelude (luascript.Record): the calls of the
			// functions the script calls.
			for _, fn := range strings.Split(string(prelude), "\nlocal function ")[1:] {
				name, _, _ := strings.Cut(fn, "(")
				if regexp.MustCompile(`\b` + name + `\(`).Match(src) {
					for _, m := range callRE.FindAllStringSubmatch(fn, -1) {
						want = append(want, strings.ToLower(m[1]))
					}
				}
			}
		}
		for _, c := range want {
			if !slices.Contains(a.Commands, c) {
				t.Errorf("%s runs %v, which call %s: add it to Access", a.Op, scripts, c)
			}
		}
		for _, k := range append(slices.Clone(a.Keys), a.Channels...) {
			if !strings.HasPrefix(k, `a\*b:`) {
				t.Errorf("%s: pattern %q lacks the escaped prefix", a.Op, k)
			}
		}
		if a.Op != "Chats" && a.Op != "Users" && len(a.Keys) == 0 {
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
		src, _ := os.ReadFile(f)
		if !used[f] {
			t.Errorf("%s is run by no method of accessScripts", f)
		}
		// Every call names its command literally, so the regexp above
		// sees them all.
		if n, lit := strings.Count(string(src), "redis.call(")+strings.Count(string(src), "redis.pcall("), len(callRE.FindAllString(string(src), -1)); n != lit {
			t.Errorf("%s: %d calls, %d of them with a literal command name", f, n, lit)
		}
	}
}
