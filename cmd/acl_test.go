package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
)

// Every command a queue Lua script calls is granted by `chatq acl`: a
// script runs with its caller's ACL, so a missing grant fails inside the
// script. pkg/chat and pkg/shardlist check their Access tables against
// their own scripts.
func TestACLCoversScripts(t *testing.T) {
	args := aclArgs("u", selectNeeds(needs(""), false), "", []string{"rsmq"}, false, false)
	granted := map[string]bool{}
	for _, a := range args {
		if c, ok := strings.CutPrefix(a, "+"); ok {
			granted[c] = true
		}
	}
	files, err := filepath.Glob("../pkg/delayq/*.lua")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scripts found: %v", err)
	}
	call := regexp.MustCompile(`redis\.p?call\(\s*['"]([A-Za-z]+)['"]`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range call.FindAllStringSubmatch(string(src), -1) {
			if c := strings.ToLower(m[1]); !granted[c] {
				t.Errorf("%s calls %s, which `chatq acl` does not grant: add it to needs in cmd/acl.go and to docs/security.md", f, c)
			}
		}
	}
}

func TestACLArgs(t *testing.T) {
	ro := aclArgs("dash", selectNeeds(needs("a*b:"), true), "a*b:", []string{"ns", "other"}, true, true)
	for _, w := range []string{"+zadd", "+hset", "+del", "+set", "+publish", "+sadd", "+hincrby", "+lpush", "+rpush", "+ltrim"} {
		if slices.Contains(ro, w) {
			t.Errorf("--read-only grants %s", w)
		}
	}
	for _, want := range []string{"+cluster|slots", "+select", `~a\*b:ns:*`, `~a\*b:other:*`, `~a\*b:{*}:*`, `&a\*b:chat:sent`, "resetkeys", "resetchannels", "-@all", "on"} {
		if !slices.Contains(ro, want) {
			t.Errorf("missing %s in %v", want, ro)
		}
	}
	for _, a := range ro {
		if strings.HasPrefix(a, ">") || strings.HasPrefix(a, "#") || a == "nopass" || a == "resetpass" || a == "reset" {
			t.Errorf("the line touches passwords: %s", a)
		}
	}
	if got := quoteAll([]string{"~a b:*", `x"y`, "plain"}); got[0] != `"~a b:*"` || got[1] != `"x\"y"` || got[2] != "plain" {
		t.Errorf("quoteAll: %q", got)
	}
}

// needsTable renders needs as the table of docs/security.md.
func needsTable() string {
	var b strings.Builder
	b.WriteString("| command | writes | Redis commands (besides HELLO, PING and the script commands) | keys | channels |\n")
	b.WriteString("| --- | --- | --- | --- | --- |\n")
	for _, n := range needs("") {
		w := "no"
		if n.Write {
			w = "yes"
		}
		cmds := strings.ToUpper(strings.Join(n.Redis, " "))
		if cmds == "" {
			cmds = "none"
		}
		keys := "`" + strings.Join(n.Keys, "` `") + "`"
		if len(n.Keys) == 0 {
			keys = ""
		}
		chans := ""
		if len(n.Channels) > 0 {
			chans = "`" + strings.Join(n.Channels, "` `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", n.Command, w, cmds, keys, chans)
	}
	return b.String()
}

// docs/security.md lists what each command needs, as chatq acl grants it.
func TestSecurityDocListsNeeds(t *testing.T) {
	doc, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	if want := needsTable(); !strings.Contains(string(doc), want) {
		t.Errorf("docs/security.md does not hold the table of cmd/acl.go's needs; put this in it:\n\n%s", want)
	}
}

// The chat and list commands' needs come from their packages' Access
// tables: every method named exists there, and a command that writes is
// one whose methods do.
func TestACLNeedsFromPackages(t *testing.T) {
	for _, n := range needs("") {
		if strings.HasPrefix(n.Command, "chat ") || strings.HasPrefix(n.Command, "list ") {
			if len(n.Redis) == 0 || len(n.Keys) == 0 {
				t.Errorf("%s: needs nothing: %+v", n.Command, n)
			}
		}
	}
	if got := len(chatCommands) + len(listCommands); got != 19 {
		t.Errorf("%d chat and list commands mapped, want 19", got)
	}
	for _, c := range []string{"chat pending", "chat watch --mark", "list lpop, rpop"} {
		if n := needFor(t, c); !n.Write {
			t.Errorf("%s does not write", c)
		}
	}
	for _, c := range []string{"chat pending --peek", "chat watch", "list llen"} {
		if n := needFor(t, c); n.Write {
			t.Errorf("%s writes", c)
		}
	}
}

func needFor(t *testing.T, command string) need {
	t.Helper()
	for _, n := range needs("") {
		if n.Command == command {
			return n
		}
	}
	t.Fatalf("no needs for %s", command)
	return need{}
}

func TestACLFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want aclOptions // IO apart
		hint string     // for a usage error: its hint ("-": none); "" when none is wanted
	}{
		{args: []string{"acl", "--user", "app"}, want: aclOptions{User: "app", Namespaces: []string{"rsmq"}}},
		{args: []string{"--prefix", "a*b:", "--cluster", "--user", "dash", "acl", "--read-only", "--namespace", "jobs,mail", "-o", "json"},
			want: aclOptions{Output: cmdutil.Output{JSON: true}, User: "dash", ReadOnly: true, Namespaces: []string{"jobs", "mail"}, Prefix: "a*b:", Cluster: true}},
		{args: []string{"--url", "redis://127.0.0.1:6379/3", "acl", "--user", "app"}, want: aclOptions{User: "app", Namespaces: []string{"rsmq"}, DB: 3}},
		{args: []string{"--db", "5", "acl", "--user", "app"}, want: aclOptions{User: "app", Namespaces: []string{"rsmq"}, DB: 5}},
		// CHATQ_NAMESPACE when no --namespace, which wins over it.
		{args: []string{"acl", "--user", "app"}, env: map[string]string{"CHATQ_NAMESPACE": "a,b"}, want: aclOptions{User: "app", Namespaces: []string{"a", "b"}}},
		{args: []string{"acl", "--user", "app", "--namespace", "c"}, env: map[string]string{"CHATQ_NAMESPACE": "a,b"}, want: aclOptions{User: "app", Namespaces: []string{"c"}}},
		{args: []string{"acl"}, hint: "name the user to create: chatq acl --user app"},
		{args: []string{"acl", "--user", "app", "--namespace", "a b"}, hint: "-"},
		{args: []string{"acl", "--user", "app", "--namespace", "x{y}"}, hint: "-"},
		{args: []string{"acl", "--user", "app"}, env: map[string]string{"CHATQ_NAMESPACE": "a,"}, hint: "-"},
		{args: []string{"acl", "--user", "app", "extra"}, hint: "-"},
	} {
		o, err := parse(t, newCmdACL, tc.env, tc.args...)
		if tc.hint != "" {
			want := tc.hint
			if want == "-" {
				want = ""
			}
			if !isUsage(err) || hintOf(err) != want {
				t.Errorf("%q: %v (hint %q), want a usage error with hint %q", tc.args, err, hintOf(err), want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if o.IO == nil {
			t.Errorf("%q: no streams", tc.args)
		}
		o.IO = nil
		if !reflect.DeepEqual(*o, tc.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.args, *o, tc.want)
		}
	}
}

func TestACLRun(t *testing.T) {
	opts := func(io *iostreams.IOStreams, json bool) *aclOptions {
		return &aclOptions{Output: cmdutil.Output{IO: io, JSON: json}, User: "app", ReadOnly: true, Namespaces: []string{"jobs"}, Prefix: "p:", DB: 2}
	}
	want := strings.Join(quoteAll(aclArgs("app", selectNeeds(needs("p:"), true), "p:", []string{"jobs"}, false, true)), " ") + "\n"
	if !strings.Contains(want, " +select ") || !strings.Contains(want, " ~p:jobs:* ") || strings.Contains(want, "+zadd") {
		t.Fatalf("the line under test is not the one asked for: %s", want)
	}
	for _, m := range modes {
		// One line, the same on a terminal and piped, for redis-cli.
		io, out, errOut := iostreams.Test(m.tty, "")
		if err := aclRun(opts(io, false)); err != nil {
			t.Fatal(err)
		}
		if out.String() != want || errOut.Len() != 0 {
			t.Errorf("%s: stdout %q, stderr %q", m.name, out, errOut)
		}

		io, out, _ = iostreams.Test(m.tty, "")
		if err := aclRun(opts(io, true)); err != nil {
			t.Fatal(err)
		}
		var res aclResult
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("%s: %q: %v", m.name, out, err)
		}
		// The needs are shown without the prefix, and only the readers'.
		if res.User != "app" || !res.ReadOnly || res.Line+"\n" != want || len(res.Needs) == 0 || !reflect.DeepEqual(res.Needs, selectNeeds(needs(""), true)) {
			t.Errorf("%s: %+v", m.name, res)
		}
		for _, n := range res.Needs {
			if n.Write {
				t.Errorf("%s: --read-only lists %s, which writes", m.name, n.Command)
			}
		}
	}
}
