package cmdutil

import (
	"crypto/x509"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/spf13/cobra"
)

// conn's errors are not cmdutil's types: they exit 2 and carry their hint
// by their Usage and Hint methods.
func TestConnErrorsExitAndHint(t *testing.T) {
	f := &Factory{Getenv: func(string) string { return "" }}
	_, err := conn.NewClient(&conn.Config{URL: "http://x"}, nil, 0)
	if err == nil {
		t.Fatal("http:// URL: no error")
	}
	if got := ExitCode(err, false); got != ExitUsage {
		t.Errorf("bad URL exits %d, want %d", got, ExitUsage)
	}
	if h := f.HintFor(err); !strings.Contains(h, "redis://[user@]host:port/db") {
		t.Errorf("bad URL: hint %q", h)
	}
}

// HintFor is the one hint function: a hint the error carries wins, also
// inside a write whose reply was lost; then the lost write's check; then the
// connection's hint, which knows the configuration when one is loaded.
func TestHintFor(t *testing.T) {
	write := MarkWrite(&cobra.Command{Use: "push"}, "chatq queue peek jobs")
	lost := fmt.Errorf("push: %w", io.EOF)
	tlsCfg := &conn.Config{URL: "rediss://h:6380"}
	for _, tc := range []struct {
		name string
		cfg  *conn.Config
		err  error
		want string
		code int
	}{
		{"own hint", nil, WithHint(UsageErrorf("bad"), "do this"), "do this", ExitUsage},
		{"lost write", nil, MaybeApplied(write, lost), "check with `chatq queue peek jobs` before retrying", ExitMaybeApplied},
		{"own hint in a lost write", nil, MaybeApplied(write, WithHint(lost, "resume from 7")), "resume from 7", ExitMaybeApplied},
		{"untrusted CA", tlsCfg, fmt.Errorf("ping: %w", x509.UnknownAuthorityError{}), "--cacert FILE", ExitError},
		{"untrusted CA, no configuration", nil, fmt.Errorf("ping: %w", x509.UnknownAuthorityError{}), "", ExitError},
	} {
		f := &Factory{cfg: tc.cfg, Getenv: func(string) string { return "" }}
		got := f.HintFor(tc.err)
		if tc.want == "" && got != "" || !strings.Contains(got, tc.want) {
			t.Errorf("%s: hint %q, want %q", tc.name, got, tc.want)
		}
		if code := ExitCode(tc.err, false); code != tc.code {
			t.Errorf("%s: exit %d, want %d", tc.name, code, tc.code)
		}
	}
}
