package list

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/cmdtest"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/shardlist"
)

func TestReadFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want any // *keyOptions or *rangeOptions; nil: a usage error
	}{
		{[]string{"llen", "jobs"}, &keyOptions{Key: "jobs"}},
		{[]string{"shards", "--shard-size", "64", "jobs"}, &keyOptions{listOptions: listOptions{ShardSize: 64, ShardSizeGiven: true}, Key: "jobs"}},
		{[]string{"lrange", "jobs", "0", "-1"}, &rangeOptions{Key: "jobs", Start: 0, Stop: -1}},
		{[]string{"lrange", "--shard-size", "8", "jobs", "-3", "-1"}, &rangeOptions{listOptions: listOptions{ShardSize: 8, ShardSizeGiven: true}, Key: "jobs", Start: -3, Stop: -1}},
		{[]string{"llen", "jo bs"}, nil},
		{[]string{"shards"}, nil},
		{[]string{"shards", "--shard-size", "1", "jobs"}, nil},
		{[]string{"lrange", "jobs", "0", "x"}, nil},
		{[]string{"lrange", "jobs", "-3", "-1", "--shard-size", "8"}, &rangeOptions{listOptions: listOptions{ShardSize: 8, ShardSizeGiven: true}, Key: "jobs", Start: -3, Stop: -1}},
		{[]string{"lrange", "jobs", "--shard-size=8", "-10", "--", "-1"}, &rangeOptions{listOptions: listOptions{ShardSize: 8, ShardSizeGiven: true}, Key: "jobs", Start: -10, Stop: -1}},
		{[]string{"lrange", "jobs", "0", "-1", "--bogus"}, nil},
		{[]string{"lrange", "jobs", "0", "-1", "2"}, nil},
		{[]string{"lrange", "jobs", "0"}, nil},
		{[]string{"lrange", "{jobs}", "0", "1"}, nil},
	} {
		var got any
		var shared *listOptions
		var err error
		switch tc.args[0] {
		case "llen", "shards":
			newCmd := NewCmdLen
			if tc.args[0] == "shards" {
				newCmd = NewCmdShards
			}
			var o *keyOptions
			if o, err = parse(t, newCmd, tc.args...); err == nil {
				got, shared = o, &o.listOptions
			}
		case "lrange":
			var o *rangeOptions
			if o, err = parse(t, NewCmdRange, tc.args...); err == nil {
				got, shared = o, &o.listOptions
			}
		}
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
		checkShared(t, tc.args, shared)
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

func TestReadRuns(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		lists := shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix, ShardSize: 3})
		if _, err := lists.RPush(ctx, "jobs", "a", "b", "c", "d\te"); err != nil {
			t.Fatal(err)
		}
		for _, m := range modes {
			for _, tc := range []struct {
				name     string
				run      func(listOptions) error
				terminal string
				piped    string
			}{
				{"llen", func(lo listOptions) error { return lenRun(ctx, &keyOptions{listOptions: lo, Key: "jobs"}) }, "4\n", "4\n"},
				{"lrange", func(lo listOptions) error {
					return rangeRun(ctx, &rangeOptions{listOptions: lo, Key: "jobs", Start: -2, Stop: -1})
				}, "c\nd\\te\n", "c\nd\te\n"},
				{"shards", func(lo listOptions) error { return shardsRun(ctx, &keyOptions{listOptions: lo, Key: "jobs"}) },
					"SHARD KEY LENGTH END\n0 " + b.Prefix + "{jobs}:0 2 first\n1 " + b.Prefix + "{jobs}:1 2 last\n",
					"0\t" + b.Prefix + "{jobs}:0\t2\tfirst\n1\t" + b.Prefix + "{jobs}:1\t2\tlast\n"},
			} {
				s := newStreams(m.tty, "")
				if err := tc.run(on(b, s)); err != nil {
					t.Fatalf("%s, %s: %v", tc.name, m.name, err)
				}
				got, want := s.out.String(), tc.piped
				if m.tty {
					// Aligned columns, whose width depends on the prefix.
					got, want = squeeze(got), tc.terminal
				}
				if got != want {
					t.Errorf("%s, %s: printed %q, want %q", tc.name, m.name, s.out, want)
				}
			}
		}

		s := newStreams(false, "")
		lo := on(b, s)
		lo.JSON = true
		if err := shardsRun(ctx, &keyOptions{listOptions: lo, Key: "jobs"}); err != nil {
			t.Fatal(err)
		}
		var lay shardlist.Layout
		if err := json.Unmarshal(s.out.Bytes(), &lay); err != nil || lay.Length != 4 || lay.ShardSize != 3 || len(lay.Shards) != 2 {
			t.Errorf("shards JSON %q: %+v, %v", s.out, lay, err)
		}
		s = newStreams(false, "")
		lo = on(b, s)
		lo.JSON = true
		if err := lenRun(ctx, &keyOptions{listOptions: lo, Key: "jobs"}); err != nil {
			t.Fatal(err)
		}
		var n listLengthResult
		if err := json.Unmarshal(s.out.Bytes(), &n); err != nil || n != (listLengthResult{Key: "jobs", Length: 4}) {
			t.Errorf("llen JSON %q: %+v, %v", s.out, n, err)
		}

		// Another --shard-size than the list's is refused (exit 2), saying
		// which it keeps.
		lo = on(b, newStreams(false, ""))
		lo.ShardSize, lo.ShardSizeGiven = 64, true
		err := rangeRun(ctx, &rangeOptions{listOptions: lo, Key: "jobs", Start: 0, Stop: -1})
		if !isUsage(err) || !strings.Contains(hintOf(err), "--shard-size 3") {
			t.Errorf("lrange with another shard size: %v (hint %q)", err, hintOf(err))
		}

		// A plain LIST by that name: said so, with a hint.
		if err := b.Client.RPush(ctx, b.Prefix+"plain", "x").Err(); err != nil {
			t.Fatal(err)
		}
		err = lenRun(ctx, &keyOptions{listOptions: on(b, newStreams(false, "")), Key: "plain"})
		if err == nil || !strings.Contains(err.Error(), "is a plain Redis LIST") || !strings.Contains(hintOf(err), "redis-cli LLEN") {
			t.Errorf("llen of a plain LIST: %v (hint %q)", err, hintOf(err))
		}
		// An empty range: nothing printed, ErrNothing (exit 3 with -e).
		s = newStreams(false, "")
		if err := rangeRun(ctx, &rangeOptions{listOptions: on(b, s), Key: "none", Start: 0, Stop: -1}); !errors.Is(err, cmdutil.ErrNothing) || s.out.Len() != 0 {
			t.Errorf("lrange of no list: %v, printed %q", err, s.out)
		}
	})
}

// squeeze collapses the spaces that align a table's columns to one.
func squeeze(table string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(table, "\n") {
		if line != "" {
			b.WriteString(strings.Join(strings.Fields(line), " ") + "\n")
		}
	}
	return b.String()
}

// hintOf returns the hint err carries, or "".
func hintOf(err error) string { return cmdtest.Hint(err) }
