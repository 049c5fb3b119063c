package cmd

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// An import whose reply is lost exits 4, says how many messages it knows
// imported and that a re-run is safe; the re-run imports the rest and
// skips what the lost batch stored.
func TestImportLostReplyRerun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		var in strings.Builder
		in.WriteString(`{"format":"chatq-queue-export","version":1,"exported_at":1,"queue":{"name":"orig","vt":30,"delay":0,"maxsize":65536,"max_receives":0,"dead_letter":"","created":1,"modified":1,"totalsent":250,"totalrecv":0,"msgs":250}}` + "\n")
		for i := range 250 {
			fmt.Fprintf(&in, `{"id":"0000000000lost%018d","message":"body-%d","due":1,"rc":%d,"fr":null}`+"\n", i, i, i%2)
		}
		in.WriteString(`{"end":{"messages":250}}` + "\n")
		// The second batch (messages 100-199) is applied, its reply lost.
		p.DropReplyTo("body-150")
		var out, errOut syncBuffer
		code := runChatq(ctx, pb, in.String(), &out, &errOut, "--timeout", "1s", "-o", "json", "queue", "import", "restored", "-")
		if code != cmdutil.ExitMaybeApplied {
			t.Fatalf("exit %d, want 4: %s", code, errOut.String())
		}
		var res struct {
			Imported       int  `json:"imported"`
			AlreadyPresent int  `json:"already_present"`
			Conflicts      int  `json:"conflicts"`
			Created        bool `json:"created"`
		}
		if err := json.Unmarshal([]byte(out.String()), &res); err != nil || res.Imported != 100 || !res.Created {
			t.Errorf("JSON %s (%v): want 100 imported", out.String(), err)
		}
		for _, want := range []string{"lines 102-201", "100 messages imported before them", "re-run is safe"} {
			if !strings.Contains(errOut.String(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, errOut.String())
			}
		}
		out, errOut = syncBuffer{}, syncBuffer{}
		if code := runChatq(ctx, b, in.String(), &out, &errOut, "-o", "json", "queue", "import", "restored", "-"); code != 0 {
			t.Fatalf("re-run: exit %d: %s", code, errOut.String())
		}
		res.Imported, res.AlreadyPresent = 0, 0
		if err := json.Unmarshal([]byte(out.String()), &res); err != nil || res.Imported != 50 || res.AlreadyPresent != 200 || res.Conflicts != 0 || res.Created {
			t.Errorf("re-run: %s (%v): want 50 imported, 200 already present", out.String(), err)
		}
		code, stdout, stderr := run(ctx, b, "-o", "json", "queue", "stats", "restored")
		if code != 0 || !strings.Contains(stdout, `"totalsent":250,`) || !strings.Contains(stdout, `"msgs":250,`) || !strings.Contains(stdout, `"ready":250,`) {
			t.Errorf("stats after the re-run: %s %s", stdout, stderr)
		}
	})
}
