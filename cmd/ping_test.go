package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

func TestPingFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string // the process environment (viper reads it)
		want pingOptions       // IO and Client apart
		err  bool              // a usage error
	}{
		{args: []string{"ping"},
			want: pingOptions{Server: "redis://127.0.0.1:6379/0", URL: "redis://127.0.0.1:6379/0", Timeout: 3 * time.Second}},
		{args: []string{"--url", "redis://app:s3cret@db:6380/2", "--timeout", "500ms", "ping", "-o", "json"},
			want: pingOptions{Output: cmdutil.Output{JSON: true}, Server: "redis://app:xxxxx@db:6380/2", URL: "redis://app:xxxxx@db:6380/2", Timeout: 500 * time.Millisecond}},
		{args: []string{"--cluster", "--url", "redis://n1:7000", "ping"},
			want: pingOptions{Server: "redis://n1:7000", URL: "redis://n1:7000", Timeout: 3 * time.Second, Cluster: true}},
		{args: []string{"--url", "redis://s1:26379", "--sentinel-master", "main", "ping"},
			want: pingOptions{Server: `master "main" via Sentinel redis://s1:26379`, URL: "redis://s1:26379", Timeout: 3 * time.Second, SentinelMaster: "main"}},
		{args: []string{"ping"}, env: map[string]string{"CHATQ_TIMEOUT": "2s", "CHATQ_OUTPUT": "json"},
			want: pingOptions{Output: cmdutil.Output{JSON: true}, Server: "redis://127.0.0.1:6379/0", URL: "redis://127.0.0.1:6379/0", Timeout: 2 * time.Second}},
		{args: []string{"ping", "extra"}, err: true},
		{args: []string{"--timeout", "soon", "ping"}, err: true},
	} {
		o, err := parse(t, newCmdPing, tc.env, tc.args...)
		if tc.err {
			if !isUsage(err) {
				t.Errorf("%q: %v, want a usage error", tc.args, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if o.IO == nil || o.Client == nil {
			t.Errorf("%q: no streams or client constructor", tc.args)
		}
		o.IO, o.Client = nil, nil
		if !reflect.DeepEqual(*o, tc.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.args, *o, tc.want)
		}
	}
}

// pingOn returns ping's options against b, its client given.
func pingOn(b redistest.Backend, io *iostreams.IOStreams) *pingOptions {
	return &pingOptions{Output: cmdutil.Output{IO: io}, Client: func() (redis.UniversalClient, error) { return b.Client, nil },
		Server: b.URL, URL: b.URL, Timeout: 3 * time.Second}
}

func TestPingRun(t *testing.T) { redistest.Run(t, testPingRun) }

func testPingRun(t *testing.T, b redistest.Backend) {
	ctx := t.Context()
	server, what := "miniredis", "miniredis (an embedded in-memory server, as chatq dev runs; not Redis)"
	if b.Real() {
		// The server's name as its INFO gives it: redis, or valkey.
		info, err := b.Client.Info(ctx, "server").Result()
		if err != nil {
			t.Fatal(err)
		}
		server, _ = conn.ServerIdentity(conn.InfoFields(info))
		what = server + " "
	}
	for _, m := range modes {
		// Text: the same line on a terminal and piped.
		io, out, errOut := iostreams.Test(m.tty, "")
		if err := pingRun(ctx, pingOn(b, io)); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		line := out.String()
		if !strings.HasPrefix(line, "PONG from "+b.URL+": "+what) || !strings.Contains(line, ", standalone, rtt ") ||
			!strings.HasSuffix(line, " ms\n") || strings.Count(line, "\n") != 1 || errOut.Len() != 0 {
			t.Errorf("%s: stdout %q, stderr %q", m.name, line, errOut)
		}

		// JSON: indented on a terminal, one line piped.
		io, out, _ = iostreams.Test(m.tty, "")
		o := pingOn(b, io)
		o.JSON = true
		if err := pingRun(ctx, o); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		var res pingResult
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("%s: %q: %v", m.name, out, err)
		}
		if res.URL != b.URL || res.Server != server || res.Mode != "standalone" || res.Master != "" || res.Version == "" || res.Version == "unknown" || res.RTTMs < 0 {
			t.Errorf("%s: %+v", m.name, res)
		}
		if oneLine := strings.Count(out.String(), "\n") == 1; oneLine == m.tty {
			t.Errorf("%s: JSON %q", m.name, out)
		}
	}

	// Through Sentinel the mode and master come from the options: the
	// server HELLO reaches is the master.
	io, out, _ := iostreams.Test(false, "")
	o := pingOn(b, io)
	o.SentinelMaster = "main"
	if err := pingRun(ctx, o); err != nil {
		t.Fatal(err)
	}
	if line := out.String(); !strings.HasPrefix(line, "PONG from "+b.URL+` (master "main"): `) || !strings.Contains(line, ", sentinel, rtt ") {
		t.Errorf("via Sentinel: %q", line)
	}
}

func TestPingFails(t *testing.T) {
	redis.SetLogger(conn.QuietLogger{})
	ctx := context.Background()
	io, out, _ := iostreams.Test(false, "")
	noClient := errors.New("no client")
	o := &pingOptions{Output: cmdutil.Output{IO: io}, Client: func() (redis.UniversalClient, error) { return nil, noClient }, Timeout: time.Second}
	if err := pingRun(ctx, o); err != noClient {
		t.Errorf("the client constructor's error: got %v", err)
	}

	// A server that is gone: the error names it; nothing on stdout.
	c, url := redistest.Stopped(t)
	o = &pingOptions{Output: cmdutil.Output{IO: io}, Client: func() (redis.UniversalClient, error) { return c, nil }, Server: url, URL: url, Timeout: time.Second}
	if err := pingRun(ctx, o); err == nil || !strings.HasPrefix(err.Error(), "ping "+url+": ") || out.Len() != 0 {
		t.Errorf("ping of a stopped server: %v, stdout %q", err, out)
	}
}
