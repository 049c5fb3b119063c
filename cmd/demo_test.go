package cmd

import (
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// Given --url, the demo runs on that server and leaves no key behind.
func TestDemoOnServerRemovesItsKeys(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		// A key of the user's under the same prefix must survive.
		if err := b.Client.Set(ctx, b.Prefix+"mine", "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := run(ctx, b, "demo")
		if code != cmdutil.ExitOK {
			t.Fatalf("demo exited %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "send the reminder") || strings.Contains(stderr, "started an embedded") {
			t.Errorf("the demo did not run on the given server:\n%s", stderr)
		}
		keys, err := keyspace.Scan(ctx, b.Client, keyspace.Pattern(b.Prefix), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) != 1 || keys[0] != b.Prefix+"mine" {
			t.Errorf("keys under %s after the demo: %q, want only %smine", b.Prefix, keys, b.Prefix)
		}
	})
}

// On a terminal the demo feeds the list its input itself: it shows the
// printf that does it and asks for no typing.
func TestDemoFeedsItsOwnInput(t *testing.T) {
	t.Parallel()
	b := redistest.Embedded(t)
	code, _, stderr := runTTY(t.Context(), b, "", "demo")
	if code != cmdutil.ExitOK {
		t.Fatalf("demo exited %d: %s", code, stderr)
	}
	if strings.Contains(stderr, "type it") || !strings.Contains(stderr, "$ printf 'y\\nz\\n' | chatq list lpush demo:jobs -\n") {
		t.Errorf("demo on a terminal:\n%s", stderr)
	}
}
