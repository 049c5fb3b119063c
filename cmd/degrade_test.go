package cmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// lackingServer is a redis-server of the test's own without the commands
// named: renamed away, as some managed services and proxies lack them
// (docs/compatibility.md).
func lackingServer(t *testing.T, commands ...string) redistest.Backend {
	t.Helper()
	var args []string
	for _, c := range commands {
		args = append(args, "--rename-command", c, "")
	}
	s := redistest.StartServer(t, args...)
	return redistest.Backend{Name: "redis", URL: s.URL(), Client: s.Client(), Prefix: "t:"}
}

// Without HELLO (a server or proxy that speaks only RESP2), ping names the
// server from INFO, and the other commands work.
func TestWithoutHello(t *testing.T) {
	b := lackingServer(t, "HELLO")
	ctx := t.Context()
	want := struct{ Server, Version string }{"redis", ""}
	info := b.Client.Info(ctx, "server").Val()
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok && want.Version == "" {
			want.Version = v
		}
		if v, ok := strings.CutPrefix(line, "valkey_version:"); ok {
			want.Server, want.Version = "valkey", v
		}
	}
	code, stdout, stderr := run(ctx, b, "ping", "-o", "json")
	var got struct{ Server, Version, Mode string }
	if code != 0 || json.Unmarshal([]byte(stdout), &got) != nil {
		t.Fatalf("ping: exit %d: %s %s", code, stdout, stderr)
	}
	if got.Server != want.Server || got.Version != want.Version || got.Mode != "standalone" {
		t.Errorf("ping says %+v, INFO %+v", got, want)
	}
	for _, args := range [][]string{{"queue", "create", "q"}, {"queue", "push", "q", "m"}, {"queue", "poll", "q"}, {"list", "rpush", "l", "a"}} {
		if code, _, stderr := run(ctx, b, args...); code != 0 {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// Without INFO (refused to a least-privilege user, or lacking), top shows
// what it can: the server named by HELLO, memory and clients unknown.
func TestTopWithoutInfo(t *testing.T) {
	b := lackingServer(t, "INFO")
	ctx := t.Context()
	if code, _, stderr := run(ctx, b, "queue", "create", "q"); code != 0 {
		t.Fatal(stderr)
	}
	code, stdout, stderr := run(ctx, b, "top", "--once", "-o", "json", "--interval", "0")
	var snap struct {
		Server struct {
			Server, Version, Mode string
			NoInfo                bool `json:"no_info"`
		}
		Queues []struct{ Name string }
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &snap) != nil {
		t.Fatalf("top: exit %d: %s %s", code, stdout, stderr)
	}
	if s := snap.Server; s.Server == "" || s.Version == "" || s.Mode != "standalone" || !s.NoInfo {
		t.Errorf("server %+v: want its name and version from HELLO, and no_info", s)
	}
	if len(snap.Queues) != 1 || snap.Queues[0].Name != "q" {
		t.Errorf("queues %+v", snap.Queues)
	}
	code, stdout, stderr = run(ctx, b, "top", "--once", "--interval", "0")
	if row := strings.Split(strings.SplitN(stdout, "\n", 2)[0], "\t"); code != 0 || len(row) != 7 || row[0] != "server" || row[4] != "-" || row[5] != "-" {
		t.Errorf("top piped: exit %d, server row %q: %s", code, row, stderr)
	}
}

// Without SCAN (chatq acl leaves it out: it names every key; some servers
// lack it), top lists the queues and says that lists and chats are not
// listed.
func TestTopWithoutScan(t *testing.T) {
	b := lackingServer(t, "SCAN")
	ctx := t.Context()
	for _, args := range [][]string{{"queue", "create", "q"}, {"list", "rpush", "l", "a"}} {
		if code, _, stderr := run(ctx, b, args...); code != 0 {
			t.Fatal(stderr)
		}
	}
	code, stdout, stderr := run(ctx, b, "top", "--once", "-o", "json", "--interval", "0")
	var snap struct {
		ListsRefused string `json:"lists_refused"`
		ChatsRefused string `json:"chats_refused"`
		Queues       []struct{ Name string }
		Lists        []struct{ Key string }
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &snap) != nil {
		t.Fatalf("top: exit %d: %s %s", code, stdout, stderr)
	}
	if snap.ListsRefused == "" || snap.ChatsRefused == "" || len(snap.Queues) != 1 || len(snap.Lists) != 0 {
		t.Errorf("top without SCAN: %s", stdout)
	}
}
