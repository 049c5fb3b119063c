package queue

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// An import of 300 messages whose message 250 (batch 3, line 251 after
// the header) is over the queue's maxsize stores batches 1 and 2 only,
// names the line and the count imported, and the same command run again
// with the line fixed imports the rest and skips what is there.
func TestImportStopsInBatch3(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		q, _ := testClient(b)()
		if err := q.Create(ctx, "small", delayq.Attributes{MaxSize: 1024}); err != nil {
			t.Fatal(err)
		}
		id := func(k int) string { return fmt.Sprintf("0000000000batch%017d", k) }
		input := func(long string) string {
			var in strings.Builder
			in.WriteString(`{"format":"chatq-queue-export","version":1,"exported_at":1,"queue":{"name":"small","vt":30,"delay":0,"maxsize":1024,"max_receives":0,"dead_letter":"","created":1,"modified":1,"totalsent":300,"totalrecv":0,"msgs":300}}` + "\n")
			for k := 1; k <= 300; k++ {
				body := fmt.Sprint("m", k)
				if k == 250 {
					body = long
				}
				fmt.Fprintf(&in, `{"id":%q,"message":%q,"due":%d,"rc":%d}`+"\n", id(k), body, 1000+k, k%2)
			}
			in.WriteString(`{"end":{"messages":300}}` + "\n")
			return in.String()
		}
		ios, out, errOut := testIO(false, input(strings.Repeat("x", 1025)))
		err := importRun(ctx, &importOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "small", File: "-"})
		want := "line 251: message " + id(250) + ": 1025 UTF-16 units, over small's maxsize 1024: message too long (raise it with `chatq queue set small --maxsize N`): stopped after importing 200 messages"
		if err == nil || err.Error() != want || cmdutil.ExitCode(err, false) != 1 ||
			!strings.HasPrefix(hintOf(err), "fix that line and run the same command again") {
			t.Fatalf("import: %v (exit %d, hint %q), want %q", err, cmdutil.ExitCode(err, false), hintOf(err), want)
		}
		var res queueImportJSON
		decode(t, out, &res)
		if res.Imported != 200 || res.AlreadyPresent != 0 || res.Conflicts != 0 || res.Line != 251 || res.Created {
			t.Errorf("JSON %+v, want 200 imported, line 251", res)
		}
		if errOut.Len() != 0 {
			t.Errorf("stderr %q", errOut.String())
		}
		// Batches 1 and 2 are stored, nothing of batch 3.
		ids, err := b.Client.ZRange(ctx, b.Prefix+"rsmq:small", 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		stored := make([]string, 200)
		for k := range stored {
			stored[k] = id(k + 1)
		}
		if !slices.Equal(ids, stored) {
			t.Fatalf("the queue holds %d messages, want messages 1-200", len(ids))
		}

		// The same command, the line fixed: the rest is imported.
		ios, out, errOut = testIO(false, input("m250"))
		if err := importRun(ctx, &importOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "small", File: "-"}); err != nil {
			t.Fatalf("re-run: %v %s", err, errOut.String())
		}
		res = queueImportJSON{}
		decode(t, out, &res)
		if res.Imported != 100 || res.AlreadyPresent != 200 || res.Conflicts != 0 || res.Line != 0 {
			t.Errorf("re-run: JSON %+v, want 100 imported, 200 already present", res)
		}
		if st, err := q.Stats(ctx, "small"); err != nil || st.Messages != 300 || st.TotalSent != 300 {
			t.Errorf("after the re-run: %+v %v", st, err)
		}
	})
}
