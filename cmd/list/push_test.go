package list

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/shardlist"
)

// TestPartialPushHint checks what a push that failed part way tells the
// user: how many items are stored and from where to resume, also when the
// last batch's reply was lost, and on stderr when interrupted (chatq then
// prints only "interrupted").
func TestPartialPushHint(t *testing.T) {
	for _, tc := range []struct {
		name      string
		side      side
		stdin     bool
		uncertain int
		cancel    bool
		want      []string
	}{
		{"stdin", tail, true, 0, false, []string{
			"lines 1-1000 are in the list; to resume without duplicates push from line 1001 (tail -n +1001 FILE | chatq list rpush jobs -)"}},
		{"args", head, false, 0, false, []string{"items 1-1000 are in the list; to resume without duplicates push from item 1001"}},
		{"lost reply", tail, true, 500, false, []string{
			"lines 1-1000 are in the list and 1001-1500 may be (the reply was lost): look with chatq list lrange jobs -500 -1",
			"push from line 1501 (tail -n +1501 FILE", "else from line 1001 (tail -n +1001 FILE"}},
		{"lost reply, lpush", head, true, 500, false, []string{"lrange jobs 0 499"}},
		{"interrupted", tail, true, 0, true, []string{"chatq: push to list jobs: stored 1000 of 2500 items", "chatq: hint: lines 1-1000"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var errOut bytes.Buffer
			f := &cmdutil.Factory{IO: &iostreams.IOStreams{ErrOut: &errOut}}
			o := &pushOptions{listOptions: listOptions{Output: f.Output()}, Side: tc.side, Key: "jobs", Stdin: tc.stdin}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			pe := &shardlist.PushError{Key: "jobs", Stored: 1000, Uncertain: tc.uncertain, Total: 2500, Err: errors.New("EOF")}
			err := o.partial(ctx, pe)
			got := f.HintFor(err) + errOut.String()
			if !errors.Is(err, pe) {
				t.Fatalf("error %v", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("hint and stderr %q lack %q", got, w)
				}
			}
		})
	}
}

func TestPushFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *pushOptions // nil: a usage error
	}{
		{[]string{"rpush", "jobs", "a", "b"}, &pushOptions{Side: tail, Key: "jobs", Items: []string{"a", "b"}}},
		{[]string{"lpush", "jobs", "-"}, &pushOptions{Side: head, Key: "jobs", Items: []string{"-"}, Stdin: true}},
		{[]string{"rpush", "jobs", "a", "-"}, &pushOptions{Side: tail, Key: "jobs", Items: []string{"a", "-"}}}, // "-" among others is an item
		{[]string{"rpush", "--shard-size", "64", "jobs", "--", "-1", "-2"},
			&pushOptions{listOptions: listOptions{ShardSize: 64, ShardSizeGiven: true}, Side: tail, Key: "jobs", Items: []string{"-1", "-2"}}},
		{[]string{"rpush", "jobs", "-1"}, nil}, // a flag, unknown
		{[]string{"rpush", "jobs"}, nil},
		{[]string{"rpush", "j obs", "a"}, nil},
		{[]string{"rpush", "jobs", "a", "\xff"}, nil},
		{[]string{"rpush", "jobs", shardlist.WakeMarker}, nil},
		{[]string{"rpush", "--shard-size", "1", "jobs", "a"}, nil},
		{[]string{"rpush", "--shard-size", "0", "jobs", "-"}, nil}, // before stdin is read
	} {
		s := tail
		if tc.args[0] == "lpush" {
			s = head
		}
		got, err := parse(t, sided(NewCmdPush, s), tc.args...)
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

func TestPushRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		for _, m := range modes {
			t.Run(m.name, func(t *testing.T) {
				key := "jobs-" + m.name
				s := newStreams(m.tty, "")
				if err := pushRun(ctx, &pushOptions{listOptions: on(b, s), Side: tail, Key: key, Items: []string{"a", "b"}}); err != nil {
					t.Fatal(err)
				}
				if s.out.String() != "2\n" || s.err.Len() != 0 {
					t.Errorf("stdout %q, stderr %q", s.out, s.err)
				}
				s = newStreams(m.tty, "y\nz\n")
				o := &pushOptions{listOptions: on(b, s), Side: head, Key: key, Items: []string{"-"}, Stdin: true}
				o.JSON = true
				if err := pushRun(ctx, o); err != nil {
					t.Fatal(err)
				}
				var got listLengthResult
				if err := json.Unmarshal(s.out.Bytes(), &got); err != nil || got != (listLengthResult{Key: key, Length: 4}) {
					t.Errorf("JSON %q: %+v, %v", s.out, got, err)
				}
				items, err := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix}).LRange(ctx, key, 0, -1)
				if want := []string{"z", "y", "a", "b"}; err != nil || !reflect.DeepEqual(items, want) {
					t.Errorf("list holds %q, %v; want %q", items, err, want)
				}

				// A line that is not UTF-8 is refused, by number, before
				// anything is pushed.
				s = newStreams(m.tty, "ok\n\xff\n")
				err = pushRun(ctx, &pushOptions{listOptions: on(b, s), Side: tail, Key: key, Items: []string{"-"}, Stdin: true})
				if !isUsage(err) || !strings.Contains(err.Error(), "line 2 is not valid UTF-8") {
					t.Errorf("push of a bad line: %v", err)
				}
				if n, err := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix}).LLen(ctx, key); n != 4 || err != nil {
					t.Errorf("length %d, %v after a refused push", n, err)
				}
			})
		}
	})
}
