package queue

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/spf13/cobra"
)

// The handler's CHATQ_URL never carries the password; the rest stays.
func TestWithoutPassword(t *testing.T) {
	for in, want := range map[string]string{
		"redis://127.0.0.1:6379/0":                       "redis://127.0.0.1:6379/0",
		"redis://:s3cret@127.0.0.1:6379/0":               "redis://127.0.0.1:6379/0",
		"rediss://alice:s3cret@redis.example.com:6380/2": "rediss://alice@redis.example.com:6380/2",
		"redis://bob@h:1?addr=h2:2&addr=h3:3":            "redis://bob@h:1?addr=h2:2&addr=h3:3",
		"redis://bob:pw@h:1?addr=h2:2&addr=h3:3":         "redis://bob@h:1?addr=h2:2&addr=h3:3",
		"unix://:pw@/var/run/redis.sock?db=1":            "unix:///var/run/redis.sock?db=1",
	} {
		if got := withoutPassword(in); got != want {
			t.Errorf("withoutPassword(%q) = %q, want %q", in, got, want)
		}
	}
}

// A handler gets the TLS, Sentinel and credential settings chatq runs with,
// as absolute file names, and never a password.
func TestHandlerConnEnv(t *testing.T) {
	f := &cmdutil.Factory{Getenv: func(string) string { return "" }}
	f.Load(&conn.Config{
		URL: "rediss://app:s3cret@redis.internal:6380/0", Prefix: "p:", TLS: true,
		CACert: "ca.pem", Cert: "/etc/chatq/client.pem", Key: "client.key", SNI: "redis.internal",
		SentinelMaster: "main", User: "app", DB: 2, DBSet: true, Password: "hunter2",
	}, nil)
	cmd := &cobra.Command{}
	cmd.Flags().String("namespace", "", "")
	env := strings.Join(handlerConnEnv(f, cmd), "\n")
	wd, _ := os.Getwd()
	for _, want := range []string{
		"CHATQ_URL=rediss://app@redis.internal:6380/0", "CHATQ_PREFIX=p:", "CHATQ_TLS=true",
		"CHATQ_CACERT=" + filepath.Join(wd, "ca.pem"), "CHATQ_CERT=/etc/chatq/client.pem",
		"CHATQ_KEY=" + filepath.Join(wd, "client.key"), "CHATQ_SNI=redis.internal",
		"CHATQ_SENTINEL_MASTER=main", "CHATQ_USER=app", "CHATQ_DB=2",
	} {
		if !strings.Contains(env, want+"\n") && !strings.HasSuffix(env, want) {
			t.Errorf("missing %s in:\n%s", want, env)
		}
	}
	if strings.Contains(env, "s3cret") || strings.Contains(env, "hunter2") || strings.Contains(env, "INSECURE") {
		t.Errorf("a secret or an unset setting in:\n%s", env)
	}
}
