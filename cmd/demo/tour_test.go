package demo_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"testing"

	"github.com/chatq-dev/chatq/cmd"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
)

// The whole tour with chatq's real commands on the embedded server: on a
// terminal (aligned tables, from which the polls' ids are read) and piped
// with -o json (every step's output is JSON).
func TestTour(t *testing.T) {
	acked := regexp.MustCompile(`\n\$ chatq queue ack jobs [0-9A-Za-z]{32} [0-9A-Za-z]{32}\n`)
	for _, tc := range []struct {
		name string
		tty  bool
		args []string
	}{{"terminal", true, []string{"demo"}}, {"piped json", false, []string{"demo", "-o", "json"}}} {
		ios, out, errOut := iostreams.Test(tc.tty, "")
		if code := cmd.Run(context.Background(), tc.args, ios, func(string) string { return "" }); code != cmdutil.ExitOK {
			t.Fatalf("%s: exit %d: %s", tc.name, code, errOut)
		}
		if !acked.MatchString(errOut.String()) {
			t.Errorf("%s: the tour did not ack the two polled messages:\n%s", tc.name, errOut)
		}
		if !tc.tty {
			dec, n := json.NewDecoder(out), 0
			for {
				var v any
				err := dec.Decode(&v)
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					t.Fatalf("%s: output %d is not JSON: %v", tc.name, n+1, err)
				}
				n++
			}
			if n < 20 {
				t.Errorf("%s: %d JSON outputs, want one per step", tc.name, n)
			}
		}
	}
}
