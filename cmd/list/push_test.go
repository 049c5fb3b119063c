package list

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/iostreams"
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
			o := &listPushOptions{listOptions: &listOptions{f: f}, side: tc.side, key: "jobs", stdin: tc.stdin}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel {
				cancel()
			}
			what := "item"
			if tc.stdin {
				what = "line"
			}
			pe := &shardlist.PushError{Key: "jobs", Stored: 1000, Uncertain: tc.uncertain, Total: 2500, Err: errors.New("EOF")}
			err := o.partial(ctx, pe, what)
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
