package queue

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

func TestExportFlags(t *testing.T) {
	got, err := parse(t, NewCmdExport, "jobs", "-f", "jobs.jsonl")
	if err != nil || got.Queue != "jobs" || got.File != "jobs.jsonl" || got.JSON {
		t.Fatalf("got %+v, %v", got, err)
	}
	for _, args := range [][]string{{}, {"QUEUES"}, {"a", "b"}} {
		_, err := parse(t, NewCmdExport, args...)
		wantUsage(t, args, err, "")
	}
}

func TestImportFlags(t *testing.T) {
	tests := []flagCase[importOptions]{
		{args: []string{"jobs"}, want: importOptions{Queue: "jobs", Rest: []string{}}},
		{args: []string{"jobs", "-"}, want: importOptions{Queue: "jobs", File: "-", Rest: []string{"-"}}},
		{args: []string{"-o", "json", "jobs", "-f", "x.jsonl"}, want: importOptions{Output: cmdutil.Output{JSON: true}, Queue: "jobs", File: "x.jsonl", Rest: []string{}}},
		{args: []string{"jobs", "x.jsonl"}, wantErr: `give the input as -f FILE or -, not "x.jsonl"`},
		{args: []string{"jobs", ""}, wantErr: `give the input as -f FILE or -, not ""`},
		{args: []string{"jobs", "-f", "x.jsonl", "-"}, wantErr: `give the input as -f FILE or -, not "-"`},
		{args: []string{"jobs", "-", "-"}, wantErr: "accepts between 1 and 2 arg(s)"},
		{args: []string{"QUEUES"}, wantErr: "registry"},
	}
	checkFlags(t, NewCmdImport, func(o *importOptions) { o.IO, o.Client = nil, nil }, tests)
}

// An export to stdout, piped, imports into a new queue, which is created
// from its first line; an export to a file says so on a terminal.
func TestExportImportRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		newQueue(t, b, "jobs", delayq.Attributes{VT: 2 * time.Minute, MaxSize: 2048}, "one", "two\nlines")
		ctx := context.Background()

		ios, out, errOut := testIO(false, "")
		if err := exportRun(ctx, &exportOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs"}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
		var head exportHeader
		var end exportEnd
		if len(lines) != 4 || json.Unmarshal([]byte(lines[0]), &head) != nil || json.Unmarshal([]byte(lines[3]), &end) != nil ||
			head.Format != exportFormat || head.Queue.VT != 120 || head.Queue.Msgs != 2 || end.End.Messages != 2 || errOut.Len() != 0 {
			t.Fatalf("piped export: %q %q", out, errOut)
		}
		export := out.String()

		ios, out, errOut = testIO(true, "")
		file := filepath.Join(t.TempDir(), "jobs.jsonl")
		if err := exportRun(ctx, &exportOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "jobs", File: file}); err != nil {
			t.Fatal(err)
		}
		if b, err := os.ReadFile(file); err != nil || len(b) == 0 || out.Len() != 0 || !strings.Contains(errOut.String(), "chatq: exported 2 messages of queue jobs to "+file) {
			t.Fatalf("terminal export to a file: %v %q %q", err, out, errOut)
		}

		// Import, piped from stdin, JSON.
		ios, out, _ = testIO(false, export)
		if err := importRun(ctx, &importOptions{Output: cmdutil.Output{IO: ios, JSON: true}, Client: testClient(b), Queue: "copy", File: "-"}); err != nil {
			t.Fatal(err)
		}
		var res queueImportJSON
		decode(t, out, &res)
		if !res.Created || res.Imported != 2 || res.AlreadyPresent != 0 || res.ConflictIDs == nil {
			t.Fatalf("import JSON: %+v", res)
		}
		// Again from the file, on a terminal: everything is there already;
		// the summary is on stderr, as export's.
		ios, out, errOut = testIO(true, "")
		if err := importRun(ctx, &importOptions{Output: cmdutil.Output{IO: ios}, Client: testClient(b), Queue: "copy", File: file}); err != nil {
			t.Fatal(err)
		}
		if out.Len() != 0 || errOut.String() != "chatq: imported 0 messages into copy (2 already present, 0 conflicts)\n" {
			t.Fatalf("terminal import: stdout %q, stderr %q", out, errOut)
		}
		q, _ := testClient(b)()
		if st, err := q.Stats(ctx, "copy"); err != nil || st.Messages != 2 || st.VT != 2*time.Minute || st.MaxSize != 2048 {
			t.Fatalf("copy: %+v %v", st, err)
		}
	})
}
