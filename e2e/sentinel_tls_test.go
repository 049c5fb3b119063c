package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// TestSentinelTLS runs chatq against a master found through a Sentinel,
// every server speaking only TLS (replication and the Sentinel's own
// connections too), with certificates made here: --url rediss://SENTINEL,
// --sentinel-master and --cacert. Each pattern works; then SENTINEL
// FAILOVER promotes the replica, and a running chat watch, new writes and
// reads all follow it, over TLS.
func TestSentinelTLS(t *testing.T) {
	dir := t.TempDir()
	if err := WriteTestCerts(dir); err != nil {
		t.Fatal(err)
	}
	files := &redistest.TLSFiles{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "server.pem"), Key: filepath.Join(dir, "server.key")}
	s := redistest.StartSentinelTLS(t, files)
	env := chatqEnv(t, "CHATQ_URL=rediss://"+s.Addr, "CHATQ_SENTINEL_MASTER="+s.Name, "CHATQ_CACERT="+files.CA, "CHATQ_PREFIX=t:")

	var ping struct{ Mode string }
	if err := json.Unmarshal([]byte(mustRun(t, env, "-o", "json", "ping")), &ping); err != nil || ping.Mode != "sentinel" {
		t.Fatalf("ping: mode %q, %v", ping.Mode, err)
	}
	mustRun(t, env, "queue", "create", "jobs")
	mustRun(t, env, "queue", "push", "jobs", "before")
	mustRun(t, env, "list", "rpush", "items", "before")
	mustRun(t, env, "chat", "create", "--from", "joe", "--to", "jeff", "--id", "room", "before")
	watch := startChatq(t, env, "-o", "json", "chat", "watch", "jeff")
	printed := func(body string) func() bool {
		return func() bool {
			for _, m := range jsonLines[struct{ Message string }](watch.out.String()) {
				if m.Message == body {
					return true
				}
			}
			return false
		}
	}
	if !waitUntil(time.Minute, printed("before")) {
		t.Fatalf("watch did not print the first message: %s", watch)
	}

	s.Failover(t)
	if !waitUntil(time.Minute, func() bool {
		return runOnce(t.Context(), env, "chat", "send", "room", "--from", "joe", "after").code == 0
	}) {
		t.Fatal("no send succeeded after the failover")
	}
	if !waitUntil(time.Minute, printed("after")) {
		t.Errorf("watch did not follow the failover: %s", watch)
	}
	if got := strings.TrimSpace(mustRun(t, env, "list", "lpop", "items")); got != "before" {
		t.Errorf("lpop after the failover: %q, want before", got)
	}
	var polled []struct{ Message string }
	if err := json.Unmarshal([]byte(mustRun(t, env, "-o", "json", "queue", "poll", "jobs")), &polled); err != nil || len(polled) != 1 || polled[0].Message != "before" {
		t.Errorf("poll after the failover: %+v %v", polled, err)
	}
	if code := watch.interrupt(); code != 0 {
		t.Errorf("watch: exit %d: %s", code, watch)
	}
}
