package top

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
	"github.com/chatq-dev/chatq/internal/testkit/cmdtest"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

func TestTopFlags(t *testing.T) {
	lim := func(q, l, c int) Limits {
		out := DefaultLimits
		out.Queues, out.Lists, out.Chats = q, l, c
		return out
	}
	def := DefaultLimits
	base := topOptions{Interval: time.Second, Snapshot: true, Namespace: "rsmq", Limits: def, Prefix: "p:", URL: "redis://app:xxxxx@db:6380/0"}
	with := func(change func(o *topOptions)) *topOptions {
		o := base
		change(&o)
		return &o
	}
	for _, tc := range []struct {
		args []string
		cfg  conn.Config // beside URL and Prefix
		env  map[string]string
		want *topOptions // nil: a usage error
		hint string
	}{
		// Off a terminal (the test's streams) it takes one snapshot.
		{args: []string{"top"}, want: &base},
		{args: []string{"top", "--once", "--interval", "0", "--namespace", "app", "--max-queues", "2", "--max-lists", "3", "--max-chats", "4"},
			want: with(func(o *topOptions) { o.Once, o.Interval, o.Namespace, o.Limits = true, 0, "app", lim(2, 3, 4) })},
		{args: []string{"top"}, cfg: conn.Config{Output: "json", Cluster: true}, env: map[string]string{"NO_COLOR": "1", "CHATQ_NAMESPACE": "env"},
			want: with(func(o *topOptions) { o.JSON, o.Cluster, o.NoColor, o.Namespace = true, true, true, "env" })},
		{args: []string{"top", "--namespace", "flag"}, env: map[string]string{"CHATQ_NAMESPACE": "env"},
			want: with(func(o *topOptions) { o.Namespace = "flag" })},
		{args: []string{"top", "--interval", "-1s"}, hint: "e.g. --interval 1s; a faster refresh would mostly measure itself"},
		{args: []string{"top", "--interval", "soon"}},
		{args: []string{"top", "--max-queues", "0"}},
		{args: []string{"top", "--max-lists", "0"}},
		{args: []string{"top", "--max-chats", "0"}},
		{args: []string{"top", "--namespace", "a b"}},
		{args: []string{"top"}, env: map[string]string{"CHATQ_NAMESPACE": "x{y}"}},
		{args: []string{"top", "extra"}},
	} {
		cfg := tc.cfg
		cfg.URL, cfg.Prefix = "redis://app:s3cret@db:6380/0", "p:"
		o, err := cmdtest.Parse(t, cmdtest.Root(), cmdtest.Factory(&cfg, tc.env), NewCmdTop, tc.args...)
		if tc.want == nil {
			var h *cmdutil.HintError
			if !cmdtest.IsUsage(err) || tc.hint != "" && (!errors.As(err, &h) || h.Hint() != tc.hint) {
				t.Errorf("%q: %v, want a usage error (hint %q)", tc.args, err, tc.hint)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if o.IO == nil || o.Client == nil || o.Clock == nil {
			t.Errorf("%q: no streams, client constructor or clock", tc.args)
		}
		o.IO, o.Client, o.Clock = nil, nil, nil
		if !reflect.DeepEqual(o, tc.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.args, o, tc.want)
		}
	}
}

// The live view refreshes at most every 100ms; a snapshot may skip the
// rates with --interval 0.
func TestTopValidate(t *testing.T) {
	for _, tc := range []struct {
		snapshot bool
		interval time.Duration
		ok       bool
	}{
		{false, 100 * time.Millisecond, true},
		{false, 99 * time.Millisecond, false},
		{false, 0, false},
		{true, 0, true},
		{true, time.Millisecond, true},
		{true, -time.Millisecond, false},
	} {
		err := (&topOptions{Snapshot: tc.snapshot, Interval: tc.interval, Limits: DefaultLimits}).validate()
		if tc.ok != (err == nil) || err != nil && !cmdtest.IsUsage(err) {
			t.Errorf("snapshot=%v interval=%s: %v", tc.snapshot, tc.interval, err)
		}
	}
}

// topOn returns the options of a snapshot of b.
func topOn(b redistest.Backend, io *iostreams.IOStreams) *topOptions {
	return &topOptions{Output: cmdutil.Output{IO: io}, Client: func() (redis.UniversalClient, error) { return b.Client, nil },
		Snapshot: true, Namespace: "rsmq", Limits: testLimits(), Prefix: b.Prefix, URL: b.URL, Clock: time.Now}
}

func TestTopRun(t *testing.T) { redistest.Run(t, testTopRun) }

func testTopRun(t *testing.T, b redistest.Backend) {
	ctx := t.Context()
	fill(t, ctx, b.Client, b.Prefix)
	// The rows each kind starts with, cells split as printed piped; the
	// server's row and the oldest ready message's age vary.
	want := []string{
		"queue emails 0 0 0 - - - - - -",
		"queue jobs 3 1 1 - jobs-dead 0 * - -",
		"queue jobs-dead 0 0 0 - - - - - -",
		"list events 250 3",
		"chat lunch 1 1 -",
		"chat ops 1 1 -",
	}
	for _, m := range []struct {
		name string
		tty  bool
	}{{"terminal", true}, {"piped", false}} {
		io, out, errOut := iostreams.Test(m.tty, "")
		if err := topRun(ctx, topOn(b, io)); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		var rows, headers []string
		for _, line := range strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n") {
			cells := strings.Split(line, "\t")
			if m.tty {
				cells = strings.Fields(line)
			}
			switch {
			case len(cells) == 0:
			case cells[0] == "KIND":
				headers = append(headers, strings.Join(cells, " "))
			case cells[0] == "server":
				if len(cells) != 7 {
					t.Errorf("%s: server row %q", m.name, line)
				}
			default:
				if cells[0] == "queue" && cells[1] == "jobs" && len(cells) > 8 {
					cells[8] = "*"
				}
				rows = append(rows, strings.Join(cells, " "))
			}
		}
		if !reflect.DeepEqual(rows, want) {
			t.Errorf("%s: rows\n%q\nwant\n%q\n%s", m.name, rows, want, out)
		}
		if m.tty != (len(headers) == 4) || !m.tty && len(headers) != 0 || errOut.Len() != 0 {
			t.Errorf("%s: headers %q, stderr %q", m.name, headers, errOut)
		}

		io, out, _ = iostreams.Test(m.tty, "")
		o := topOn(b, io)
		o.JSON = true
		if err := topRun(ctx, o); err != nil {
			t.Fatalf("%s: %v", m.name, err)
		}
		var s Snapshot
		if err := json.Unmarshal(out.Bytes(), &s); err != nil {
			t.Fatalf("%s: %q: %v", m.name, out, err)
		}
		if len(s.Queues) != 3 || s.Queues[1].Name != "jobs" || s.Queues[1].Ready != 3 || s.QueuesKnown != 3 ||
			len(s.Lists) != 1 || s.Lists[0].Key != "events" || s.Lists[0].Length != 250 || s.Chats.Count != 2 || s.Server.Version == "" {
			t.Errorf("%s: snapshot %+v", m.name, s)
		}
		if oneLine := strings.Count(out.String(), "\n") == 1; oneLine == m.tty {
			t.Errorf("%s: JSON %q", m.name, out)
		}
	}
}

func TestTopFails(t *testing.T) {
	redis.SetLogger(conn.QuietLogger{})
	ctx := context.Background()
	io, out, _ := iostreams.Test(false, "")
	noClient := errors.New("no client")
	o := &topOptions{Output: cmdutil.Output{IO: io}, Client: func() (redis.UniversalClient, error) { return nil, noClient }, Snapshot: true, Limits: DefaultLimits, Clock: time.Now}
	if err := topRun(ctx, o); err != noClient {
		t.Errorf("the client constructor's error: got %v", err)
	}

	// A server that is gone: the error names it; nothing on stdout.
	c, url := redistest.Stopped(t)
	o.Client, o.URL, o.Namespace = func() (redis.UniversalClient, error) { return c, nil }, url, "rsmq"
	if err := topRun(ctx, o); err == nil || !strings.HasPrefix(err.Error(), "top "+url+": ") || out.Len() != 0 {
		t.Errorf("top of a stopped server: %v, stdout %q", err, out)
	}
}
