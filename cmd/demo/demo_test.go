package demo

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/cmdtest"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

func TestDemoFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *demoOptions // nil: a usage error
	}{
		{[]string{"demo"}, &demoOptions{Output: cmdutil.Output{JSON: true}, URL: "redis://db:6380/0", Prefix: "p:"}},
		{[]string{"demo", "--url", "redis://db:6380/0"}, &demoOptions{Output: cmdutil.Output{JSON: true}, URL: "redis://db:6380/0", URLGiven: true, Prefix: "p:"}},
		{[]string{"demo", "extra"}, nil},
	} {
		f := cmdtest.Factory(&conn.Config{URL: "redis://db:6380/0", Prefix: "p:", Output: "json"}, nil)
		newCmd := func(f *cmdutil.Factory, runF func(context.Context, *demoOptions) error) *cobra.Command {
			return NewCmdDemo(f, (&fakeChatq{}).exec, runF)
		}
		o, err := cmdtest.Parse(t, cmdtest.Root(), f, newCmd, tc.args...)
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
		if o.IO == nil || o.Client == nil || o.Exec == nil {
			t.Errorf("%q: no streams, client constructor or exec", tc.args)
		}
		o.IO, o.Client, o.Exec = nil, nil, nil
		if !reflect.DeepEqual(o, tc.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.args, o, tc.want)
		}
	}
}

// fakeChatq stands for chatq's Run: it records the command lines, stores a
// key under each one's prefix as a real step would (when it has a client),
// prints ids for a poll as queue poll does, and exits 1 for the step fail.
type fakeChatq struct {
	client *redis.Client
	fail   string
	calls  [][]string
	ids    int
}

func (f *fakeChatq) exec(ctx context.Context, args []string, io *iostreams.IOStreams, _ func(string) string) int {
	f.calls = append(f.calls, args)
	prefix, output, step := args[3], args[5], args[6:]
	if f.client != nil {
		if err := f.client.Set(ctx, fmt.Sprintf("%sstep:%d", prefix, len(f.calls)), "x", 0).Err(); err != nil {
			return 1
		}
	}
	if strings.Join(step, " ") == f.fail {
		return 1
	}
	if step[0] == "queue" && step[1] == "poll" {
		f.ids++
		id := fmt.Sprintf("%032d", f.ids)
		if output == "json" {
			_ = io.WriteJSON([]map[string]any{{"id": id, "rc": 1, "message": "resize photo 42"}})
		} else {
			t := io.NewTable("ID", "RC", "MESSAGE")
			t.Row(id, 1, "resize photo 42")
			_ = t.Flush()
		}
	}
	return 0
}

// step returns the command line of call i without the options every step
// gets, and those options.
func step(call []string) (string, []string) { return strings.Join(call[6:], " "), call[:6] }

// The tour runs every part in order on one server and prefix, each step
// with -o as given; the ids the polls print are the ones acked; on a
// terminal and piped, in text and JSON.
func TestDemoRun(t *testing.T) {
	for _, output := range []string{"text", "json"} {
		for _, m := range []struct {
			name string
			tty  bool
		}{{"terminal", true}, {"piped", false}} {
			ios, _, errOut := iostreams.Test(m.tty, "")
			fake := &fakeChatq{}
			if err := demoRun(context.Background(), &demoOptions{Output: cmdutil.Output{IO: ios, JSON: output == "json"}, Exec: fake.exec, URL: "redis://unused:1/0", Prefix: "p:"}); err != nil {
				t.Fatalf("%s %s: %v", output, m.name, err)
			}
			var steps []string
			for _, c := range fake.calls {
				s, common := step(c)
				steps = append(steps, s)
				if common[0] != "--url" || common[1] == "redis://unused:1/0" || common[2] != "--prefix" || common[3] != "p:" || common[4] != "-o" || common[5] != output {
					t.Errorf("%s %s: %s ran with %q, want the embedded server's --url, --prefix p: and -o %s", output, m.name, s, common, output)
				}
			}
			if len(steps) < 20 || steps[0] != "ping" || !strings.HasPrefix(steps[1], "chat create") || steps[len(steps)-1] != "list llen demo:jobs" {
				t.Errorf("%s %s: steps %q", output, m.name, steps)
			}
			wantAck := fmt.Sprintf("queue ack jobs %032d %032d", 1, 2)
			if !slices.Contains(steps, wantAck) || !strings.Contains(errOut.String(), "\n$ chatq "+wantAck+"\n") {
				t.Errorf("%s %s: no %q in the steps %q", output, m.name, wantAck, steps)
			}
			if !strings.Contains(errOut.String(), "# started an embedded in-memory server on ") || !strings.HasSuffix(errOut.String(), "# that was the tour; `chatq --help` lists every command\n") {
				t.Errorf("%s %s: narration %q", output, m.name, errOut)
			}
		}
	}
}

// Given --url, the tour runs on that server under a prefix of its own
// behind --prefix, and removes its keys, also when a step fails (which
// ends the tour with an error naming it); the user's keys stay.
func TestDemoOnServer(t *testing.T) { redistest.Run(t, testDemoOnServer) }

func testDemoOnServer(t *testing.T, b redistest.Backend) {
	ctx := context.Background()
	mine := b.Prefix + "mine"
	if err := b.Client.Set(ctx, mine, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for _, fail := range []string{"", "chat send 1 --from joe message 2"} {
		ios, _, errOut := iostreams.Test(false, "")
		fake := &fakeChatq{client: b.Client, fail: fail}
		err := demoRun(ctx, &demoOptions{Output: cmdutil.Output{IO: ios}, Exec: fake.exec, URL: b.URL, URLGiven: true, Prefix: b.Prefix,
			Client: func() (redis.UniversalClient, error) { return b.Client, nil }})
		if fail == "" && err != nil {
			t.Fatal(err)
		}
		if fail != "" && (err == nil || err.Error() != "demo step `chatq chat send 1 --from joe 'message 2'` exited 1") {
			t.Errorf("a failed step: %v", err)
		}
		if s, _ := step(fake.calls[len(fake.calls)-1]); fail != "" && s != fail {
			t.Errorf("the tour went on after %q failed, to %q", fail, s)
		}
		var prefix string
		for _, c := range fake.calls {
			if c[1] != b.URL || !strings.HasPrefix(c[3], b.Prefix+"chatq-demo") || prefix != "" && c[3] != prefix {
				t.Fatalf("a step ran with %q: want --url %s and one prefix of its own under %s", c[:4], b.URL, b.Prefix)
			}
			prefix = c[3]
		}
		keys, err := keyspace.Scan(ctx, b.Client, keyspace.Pattern(b.Prefix), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 1 || keys[0] != mine {
			t.Errorf("keys under %s after the demo: %q, want only %s", b.Prefix, keys, mine)
		}
		if !strings.Contains(errOut.String(), "# removed the demo's keys ("+prefix+"*)") {
			t.Errorf("stderr %q", errOut)
		}
	}
}
