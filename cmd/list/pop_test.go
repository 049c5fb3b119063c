package list

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/shardlist"
)

func TestPopFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *popOptions // nil: a usage error
	}{
		{[]string{"lpop", "jobs"}, &popOptions{Side: head, Key: "jobs", Count: 1}},
		{[]string{"rpop", "jobs", "-n", "10"}, &popOptions{Side: tail, Key: "jobs", Count: 10}},
		{[]string{"rpop", "--shard-size", "64", "jobs"}, &popOptions{listOptions: listOptions{ShardSize: 64, ShardSizeGiven: true}, Side: tail, Key: "jobs", Count: 1}},
		{[]string{"lpop", "jobs", "-n", "0"}, nil},
		{[]string{"lpop", "jobs", "-n", "x"}, nil},
		{[]string{"lpop", "{jobs}"}, nil},
		{[]string{"lpop", "jobs", "more"}, nil},
		{[]string{"lpop", "--shard-size", "1", "jobs"}, nil},
	} {
		s := head
		if tc.args[0] == "rpop" {
			s = tail
		}
		got, err := parse(t, sided(NewCmdPop, s), tc.args...)
		if tc.want == nil {
			if !isUsage(err) {
				t.Errorf("%q: got %+v, %v; want a usage error", tc.args, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		checkShared(t, tc.args, &got.listOptions)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

func TestBPopFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *bpopOptions // nil: a usage error
	}{
		{[]string{"blpop", "jobs"}, &bpopOptions{Side: head, Key: "jobs"}},
		{[]string{"brpop", "jobs", "--wait", "250ms", "--give-up-after", "1m"}, &bpopOptions{Side: tail, Key: "jobs", Wait: 250 * time.Millisecond, GiveUpAfter: time.Minute}},
		{[]string{"blpop", "jobs", "--wait", "-1s"}, nil},
		{[]string{"blpop", "jobs", "--wait", "5"}, nil},
		{[]string{"blpop", ""}, nil},
		{[]string{"blpop", "--shard-size", "-3", "jobs"}, nil},
	} {
		s := head
		if tc.args[0] == "brpop" {
			s = tail
		}
		got, err := parse(t, sided(NewCmdBPop, s), tc.args...)
		if tc.want == nil {
			if !isUsage(err) {
				t.Errorf("%q: got %+v, %v; want a usage error", tc.args, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		checkShared(t, tc.args, &got.listOptions)
		if got.Persistent == nil {
			t.Errorf("%q: no reconnecting loop", tc.args)
		}
		got.Persistent = nil
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

func TestPopRuns(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		lists := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix})
		for _, m := range modes {
			t.Run(m.name, func(t *testing.T) {
				key := "jobs-" + m.name
				// Another client may push bytes that are not UTF-8.
				if _, err := lists.RPush(ctx, key, "a\x1b[2J", "b", "\xff", "c"); err != nil {
					t.Fatal(err)
				}
				s := newStreams(m.tty, "")
				if err := popRun(ctx, &popOptions{listOptions: on(b, s), Side: head, Key: key, Count: 2}); err != nil {
					t.Fatal(err)
				}
				want := "a\x1b[2J\nb\n" // piped: byte for byte
				if m.tty {
					want = "a\\x1b[2J\nb\n"
				}
				if s.out.String() != want {
					t.Errorf("printed %q, want %q", s.out, want)
				}

				s = newStreams(m.tty, "")
				o := &popOptions{listOptions: on(b, s), Side: tail, Key: key, Count: 5}
				o.JSON = true
				if err := popRun(ctx, o); err != nil {
					t.Fatal(err)
				}
				var got []any
				if err := json.Unmarshal(s.out.Bytes(), &got); err != nil {
					t.Fatalf("%q: %v", s.out, err)
				}
				if want := []any{"c", map[string]any{"base64": "/w=="}}; !reflect.DeepEqual(got, want) {
					t.Errorf("JSON %v, want %v", got, want)
				}

				// Empty: [] and ErrNothing (exit 3 with -e).
				s = newStreams(m.tty, "")
				o = &popOptions{listOptions: on(b, s), Side: tail, Key: key, Count: 1}
				o.JSON = true
				if err := popRun(ctx, o); !errors.Is(err, cmdutil.ErrNothing) || s.out.String() != "[]\n" {
					t.Errorf("pop of an empty list: %v, printed %q", err, s.out)
				}

				// A blocking pop: an item there, then a wait that ends
				// with nothing.
				if _, err := lists.RPush(ctx, key, "d"); err != nil {
					t.Fatal(err)
				}
				for i, wantOut := range []string{"d\n", ""} {
					s = newStreams(m.tty, "")
					bo := &bpopOptions{listOptions: on(b, s), Side: head, Key: key, Wait: 200 * time.Millisecond,
						Persistent: func(d time.Duration) *conn.Persistent { return &conn.Persistent{IO: s.io, GiveUpAfter: d} }}
					err := bpopRun(ctx, bo)
					if (i == 1) != errors.Is(err, cmdutil.ErrNothing) || (i == 0 && err != nil) || s.out.String() != wantOut {
						t.Errorf("blocking pop %d: %v, printed %q, want %q", i, err, s.out, wantOut)
					}
				}
			})
		}
	})
}
