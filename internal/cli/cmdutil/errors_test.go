package cmdutil

import (
	"crypto/x509"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/spf13/cobra"
)

// conn's errors are clierr's kinds, as cmdutil's are: a bad setting exits
// 2 and carries its hint.
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

type breach struct{ yes bool }

func (b breach) Error() string  { return "threshold breached" }
func (b breach) Breached() bool { return b.yes }

// An error that says a health check found a threshold breached exits 5,
// also wrapped; one that says it was not exits 1.
func TestBreachedExits5(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
	}{
		{breach{true}, 5},
		{fmt.Errorf("check: %w", breach{true}), 5},
		{WithHint(breach{true}, "look"), 5},
		{breach{false}, ExitError},
	} {
		if code := ExitCode(tc.err, false); code != tc.code {
			t.Errorf("%v: exit %d, want %d", tc.err, code, tc.code)
		}
	}
}

// The check a lost write's hint names holds the command's own names, not
// placeholders; names a shell would split or expand are quoted.
func TestFillCheck(t *testing.T) {
	mk := func(use string, args ...string) *cobra.Command {
		c := &cobra.Command{Use: use, Run: func(*cobra.Command, []string) {}}
		c.Flags().String("from", "", "")
		if err := c.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		cmd   *cobra.Command
		check string
		want  string
	}{
		{mk("push", "jobs", "body"), "chatq queue peek QUEUE", "chatq queue peek jobs"},
		{mk("redrive", "jobs-dead"), "chatq queue stats DLQ", "chatq queue stats jobs-dead"},
		{mk("rpush", "{a b}", "x"), "chatq list lrange KEY 0 -1", `chatq list lrange '{a b}' 0 -1`},
		{mk("send", "7", "--from", "jeff", "hi"), "chatq chat history CHAT", "chatq chat history 7"},
		{mk("create", "--from", "joe", "hi"), "chatq chat ls USER", "chatq chat ls joe"},
		{mk("ls"), "chatq queue ls", "chatq queue ls"},
	} {
		if got := fillCheck(tc.cmd, tc.check); got != tc.want {
			t.Errorf("%q with %v: %q, want %q", tc.check, tc.cmd.Flags().Args(), got, tc.want)
		}
	}
}
