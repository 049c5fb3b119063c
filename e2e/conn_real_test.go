package e2e

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/chatqtest"
	"github.com/chatq-dev/chatq/cmd"
	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/redis/go-redis/v9"
	"github.com/rogpeppe/go-internal/testscript"
)

// gate returns the value of env, or skips t when it is unset, or fails it
// when the require variable is "1" (CI sets it, so that a server that did
// not start fails rather than skips).
func gate(t *testing.T, env, require string) string {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		if os.Getenv(require) == "1" {
			t.Fatalf("%s=1 but %s is not set", require, env)
		}
		t.Skipf("%s not set", env)
	}
	return v
}

// TestTLSScripts runs testdata/tls/*.txtar against real TLS redis-servers:
// CHATQ_TEST_TLS_URL (tls-auth-clients no) and CHATQ_TEST_MTLS_URL
// (tls-auth-clients yes), with the CA and a client certificate in
// CHATQ_TEST_TLS_CACERT, CHATQ_TEST_TLS_CERT and CHATQ_TEST_TLS_KEY, and the
// plain server of CHATQ_TEST_REDIS_URL, and a Redis Cluster over TLS,
// CHATQ_TEST_TLS_CLUSTER_URL. .ci/run makes them, the certificates with
// openssl.
func TestTLSScripts(t *testing.T) {
	tlsURL := gate(t, "CHATQ_TEST_TLS_URL", "CHATQ_REQUIRE_TLS")
	vars := map[string]string{"TLSURL": tlsURL}
	for env, name := range map[string]string{
		"CHATQ_TEST_MTLS_URL": "MTLSURL", "CHATQ_TEST_TLS_CACERT": "CACERT", "CHATQ_TEST_TLS_CLUSTER_URL": "TLSCLUSTERURL",
		"CHATQ_TEST_TLS_CERT": "CERT", "CHATQ_TEST_TLS_KEY": "KEY", "CHATQ_TEST_REDIS_URL": "PLAINURL",
	} {
		vars[name] = gate(t, env, "CHATQ_REQUIRE_TLS")
	}
	u, err := url.Parse(tlsURL)
	if err != nil {
		t.Fatal(err)
	}
	vars["TLSADDR"] = u.Host
	admin, err := conn.NewClient(&conn.Config{URL: tlsURL, CACert: vars["CACERT"], Timeout: 5 * time.Second}, &iostreams.IOStreams{ErrOut: os.Stderr}, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	clusterAdmin, err := conn.NewClient(&conn.Config{URL: vars["TLSCLUSTERURL"], Cluster: true, CACert: vars["CACERT"], Timeout: 5 * time.Second}, &iostreams.IOStreams{ErrOut: os.Stderr}, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { clusterAdmin.Close() })
	p := withConnCmds(chatqtest.Params("testdata/tls"))
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		if err := setup(env); err != nil {
			return err
		}
		for k, v := range vars {
			env.Setenv(k, v)
		}
		// The harness cleans the script's prefix on the plain server; this
		// cleans it on the TLS one.
		prefix := env.Getenv("CHATQ_PREFIX")
		env.Defer(func() {
			for _, c := range []redis.UniversalClient{admin, clusterAdmin} {
				if err := keyspace.DeletePrefix(context.Background(), c, prefix); err != nil {
					env.T().Fatal("cleanup: ", err)
				}
			}
		})
		return nil
	}
	testscript.Run(t, p)
}

// TestACLScripts runs the scripts of every pattern on the real server of
// CHATQ_TEST_REDIS_URL as a user created from `chatq acl` for the script's
// own prefix: whatever chatq needs and the line does not grant fails with
// NOPERM. Run with CHATQ_TEST_ACL=1 (CI does).
func TestACLScripts(t *testing.T) {
	if os.Getenv("CHATQ_TEST_ACL") != "1" {
		t.Skip("CHATQ_TEST_ACL=1 not set")
	}
	realURL := gate(t, "CHATQ_TEST_REDIS_URL", "CHATQ_REQUIRE_REDIS")
	opt, err := redis.ParseURL(realURL)
	if err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(opt)
	t.Cleanup(func() { admin.Close() })
	files, err := filepath.Glob("testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	var pick []string
	for _, f := range files {
		base := filepath.Base(f)
		// list_contract checks that llen refuses a plain LIST at KEY: a
		// TYPE of KEY itself, outside the key patterns chatq acl grants
		// (docs/security.md says so).
		if base == "list_contract.txtar" {
			continue
		}
		// The other queue kinds' keys and commands are granted by
		// `chatq acl --kind K`, not by the line this user is made from.
		if strings.HasPrefix(base, "queue_kinds_") {
			continue
		}
		// list ls and chat ls --all find lists and chats with SCAN, which
		// the line leaves out.
		if base == "list_manage.txtar" || base == "chat_all.txtar" {
			continue
		}
		for _, p := range []string{"chat_", "queue_", "list_"} {
			if strings.HasPrefix(base, p) {
				pick = append(pick, f)
				break
			}
		}
	}
	p := chatqtest.Params("")
	p.Dir = ""
	p.Files = pick
	p.Cmds["redis"] = cmdRedis // as the server's default user, like the harness
	p.Cmds["lines"] = cmdLines
	setup := p.Setup
	p.Setup = func(env *testscript.Env) error {
		if err := setup(env); err != nil {
			return err
		}
		prefix := env.Getenv("CHATQ_PREFIX")
		user := "chatqtest-" + randomHex(6)
		password := randomHex(16)
		var out, errOut bytes.Buffer
		io := &iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
		if code := cmd.Run(context.Background(), []string{"--prefix", prefix, "--user", user, "--url", realURL, "acl", "--namespace", "rsmq,other,ns,app"}, io, func(string) string { return "" }); code != 0 {
			return fmt.Errorf("chatq acl: exit %d: %s", code, errOut.String())
		}
		var args []any
		for _, a := range strings.Fields(out.String()) {
			args = append(args, a)
		}
		ctx := context.Background()
		if err := admin.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("%s: %v", out.String(), err)
		}
		if err := admin.Do(ctx, "acl", "setuser", user, ">"+password).Err(); err != nil {
			return err
		}
		env.Defer(func() { admin.Do(ctx, "acl", "deluser", user) })
		env.Setenv("CHATQ_USER", user)
		env.Setenv("CHATQ_PASSWORD", password)
		return nil
	}
	testscript.Run(t, p)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// TestSentinelFailover reaches the master named CHATQ_TEST_SENTINEL_MASTER
// through the Sentinel at CHATQ_TEST_SENTINEL_URL, forces a failover with
// SENTINEL FAILOVER, and checks that the same client follows it: writes go
// to the new master, and nothing written before is lost.
func TestSentinelFailover(t *testing.T) {
	sentinelURL := gate(t, "CHATQ_TEST_SENTINEL_URL", "CHATQ_REQUIRE_SENTINEL")
	master := gate(t, "CHATQ_TEST_SENTINEL_MASTER", "CHATQ_REQUIRE_SENTINEL")
	ctx := context.Background()
	redis.SetLogger(conn.QuietLogger{})
	cfg := &conn.Config{URL: sentinelURL, SentinelMaster: master, Timeout: 3 * time.Second}
	c, err := conn.NewClient(cfg, &iostreams.IOStreams{ErrOut: os.Stderr}, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	prefix := keyspace.UniquePrefix("chatqtest:sentinel")
	defer func() {
		if err := keyspace.DeletePrefix(ctx, c, prefix); err != nil {
			t.Error("cleanup: ", err)
		}
	}()

	// ping through Sentinel reports the mode
	var out, errOut bytes.Buffer
	io := &iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	getenv := func(string) string { return "" }
	if code := cmd.Run(ctx, []string{"--url", sentinelURL, "--sentinel-master", master, "ping", "-o", "json"}, io, getenv); code != 0 {
		t.Fatalf("ping: exit %d: %s", code, errOut.String())
	}
	if !strings.Contains(out.String(), `"mode":"sentinel"`) {
		t.Errorf("ping: %s", out.String())
	}

	chatq := func(args ...string) (int, string) {
		out.Reset()
		errOut.Reset()
		base := []string{"--url", sentinelURL, "--sentinel-master", master, "--prefix", prefix}
		code := cmd.Run(ctx, append(base, args...), io, getenv)
		return code, out.String() + errOut.String()
	}
	if code, msg := chatq("queue", "create", "jobs"); code != 0 {
		t.Fatalf("queue create: exit %d: %s", code, msg)
	}
	if code, msg := chatq("queue", "push", "jobs", "before"); code != 0 {
		t.Fatalf("queue push: exit %d: %s", code, msg)
	}
	// the replica has what was written before the failover
	if err := c.Set(ctx, prefix+"k", "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; {
		n, err := c.Do(ctx, "wait", 1, 1000).Int()
		if err != nil {
			t.Fatal(err)
		}
		if n >= 1 {
			break
		}
		if time.Since(start) > 60*time.Second {
			t.Fatal("the replica did not catch up within 60s")
		}
	}

	sopt, err := redis.ParseURL(sentinelURL)
	if err != nil {
		t.Fatal(err)
	}
	sc := redis.NewSentinelClient(&redis.Options{Addr: sopt.Addr})
	defer sc.Close()
	old, err := sc.GetMasterAddrByName(ctx, master).Result()
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Failover(ctx, master).Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		now, err := sc.GetMasterAddrByName(ctx, master).Result()
		if err == nil && strings.Join(now, ":") != strings.Join(old, ":") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no failover from %v within 60s (last: %v, %v)", old, now, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// The same client follows: a write may fail while the roles change
	// (chatq never retries a write on its own), then succeeds.
	for {
		err := c.Set(ctx, prefix+"k", "after", 0).Err()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no write through the same client after the failover: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for {
		code, msg := chatq("queue", "push", "jobs", "after")
		if code == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queue push after the failover: exit %d: %s", code, msg)
		}
		time.Sleep(50 * time.Millisecond)
	}
	code, msg := chatq("queue", "poll", "jobs", "-n", "10", "--pop", "-o", "json")
	if code != 0 || !regexp.MustCompile(`(?s)"message":"before".*"message":"after"`).MatchString(msg) {
		t.Errorf("after the failover, queue poll: exit %d: %s", code, msg)
	}
	if code, msg := chatq("ping"); code != 0 || !strings.Contains(msg, "sentinel") {
		t.Errorf("ping after the failover: exit %d: %s", code, msg)
	}
}

// readOnlyUser makes a user with the line `chatq acl --read-only` prints,
// under a prefix of its own, on the real server of CHATQ_TEST_REDIS_URL;
// it returns the URL that logs in as that user, a client of the server's
// default user, and the prefix. The user and the prefix's keys go when the
// test ends.
func readOnlyUser(t *testing.T) (string, *redis.Client, string) {
	t.Helper()
	realURL := gate(t, "CHATQ_TEST_REDIS_URL", "CHATQ_REQUIRE_REDIS")
	opt, err := redis.ParseURL(realURL)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin := redis.NewClient(opt)
	prefix := keyspace.UniquePrefix("chatqtest:aclro")
	user, password := "chatqtest-ro-"+randomHex(6), randomHex(16)
	t.Cleanup(func() {
		admin.Do(ctx, "acl", "deluser", user)
		if err := keyspace.DeletePrefix(ctx, admin, prefix); err != nil {
			t.Error("cleanup: ", err)
		}
		admin.Close()
	})
	var out, errOut bytes.Buffer
	io := &iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	if code := cmd.Run(ctx, []string{"--url", realURL, "--prefix", prefix, "acl", "--user", user, "--read-only"}, io, func(string) string { return "" }); code != 0 {
		t.Fatal(errOut.String())
	}
	var acl []any
	for _, a := range strings.Fields(out.String()) {
		acl = append(acl, a)
	}
	if err := admin.Do(ctx, acl...).Err(); err != nil {
		t.Fatal(err)
	}
	if err := admin.Do(ctx, "acl", "setuser", user, ">"+password).Err(); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(realURL)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, password)
	return u.String(), admin, prefix
}

// TestACLReadOnly checks `chatq acl --read-only` on the real server: the
// reading commands work as that user, and every write is refused.
func TestACLReadOnly(t *testing.T) {
	if os.Getenv("CHATQ_TEST_ACL") != "1" {
		t.Skip("CHATQ_TEST_ACL=1 not set")
	}
	ro, admin, prefix := readOnlyUser(t)
	realURL := gate(t, "CHATQ_TEST_REDIS_URL", "CHATQ_REQUIRE_REDIS")
	ctx := context.Background()
	run := func(url string, args ...string) (int, string) {
		var out, errOut bytes.Buffer
		io := &iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
		code := cmd.Run(ctx, append([]string{"--url", url, "--prefix", prefix}, args...), io, func(string) string { return "" })
		return code, out.String() + errOut.String()
	}
	for _, args := range [][]string{
		{"queue", "create", "jobs"}, {"queue", "push", "jobs", "m"}, {"list", "rpush", "k", "a"},
		{"chat", "create", "--from", "joe", "--to", "jeff", "hi"},
		{"queue", "create", "held"}, {"queue", "push", "held", "h"}, {"queue", "poll", "held", "--vt", "1h"},
	} {
		if code, msg := run(realURL, args...); code != 0 {
			t.Fatalf("%v as admin: %s", args, msg)
		}
	}
	for _, args := range [][]string{
		{"ping"}, {"queue", "ls"}, {"queue", "ls", "-l"}, {"queue", "stats", "jobs"}, {"queue", "peek", "jobs"}, {"queue", "export", "jobs"},
		{"list", "llen", "k"}, {"list", "lrange", "k", "0", "-1"}, {"list", "shards", "k"},
		{"chat", "members", "1"}, {"chat", "history", "1"}, {"chat", "ls", "jeff"}, {"chat", "pending", "jeff", "--peek"},
		{"queue", "peek", "jobs", "--grep", "m"}, {"queue", "peek", "jobs", "--grep", "^m$", "--regexp"},
		{"queue", "export", "jobs", "--grep", "m"}, {"queue", "peek", "held", "--inflight-for", "1ms"},
		{"chat", "history", "1", "--grep", "hi"}, {"top", "--once", "--interval", "0"}, // without SCAN, which the line leaves out
		{"queue", "check", "jobs", "--max-ready", "10"}, {"metrics", "--max-lists", "0", "--max-chats", "0"},
	} {
		if code, msg := run(ro, args...); code != 0 {
			t.Errorf("%v as the read-only user: exit %d: %s", args, code, msg)
		}
	}
	// Without SCAN (the line leaves it out) metrics reads the queues, and
	// says that it cannot find lists and chats.
	if code, msg := run(ro, "metrics"); code != 0 || !strings.Contains(msg, `chatq_queue_messages{kind="rsmq",queue="jobs",state="ready"} 1`) ||
		!strings.Contains(msg, `chatq_discovery_refused{kind="list"} 1`) || !strings.Contains(msg, "refuses SCAN") {
		t.Errorf("metrics as the read-only user: exit %d: %s", code, msg)
	} else if i := strings.Index(msg, "refuses SCAN"); strings.Count(strings.SplitN(msg[i:], "\n", 2)[0], "NOPERM") != 1 {
		t.Errorf("metrics as the read-only user: the warning should quote the server's refusal once: %s", msg)
	}
	// Every write is refused, in any server's wording (Redis 7.2 and Valkey
	// word a script's refusals differently from 6.2 and 7.0), and changes
	// nothing.
	for _, args := range [][]string{
		{"queue", "push", "jobs", "m"}, {"queue", "poll", "jobs"}, {"queue", "create", "other"},
		{"queue", "retry", "held", "--inflight-for", "1ms"}, {"queue", "redrive", "jobs", "--to", "held"},
		{"list", "rpush", "k", "b"}, {"list", "lpop", "k"},
		{"chat", "send", "1", "--from", "joe", "x"}, {"chat", "pending", "jeff"},
	} {
		before := snapshot(t, admin, prefix)
		if code, msg := run(ro, args...); code != 1 || !conn.PermissionDenied(errors.New(msg)) {
			t.Errorf("%v as the read-only user: exit %d, want 1 refused by the ACL: %s", args, code, msg)
		}
		if after := snapshot(t, admin, prefix); !maps.Equal(before, after) {
			t.Errorf("%v as the read-only user changed the data:\n%v\nto\n%v", args, before, after)
		}
	}
}

// snapshot returns every key under prefix with its DUMP, to compare.
func snapshot(t *testing.T, c *redis.Client, prefix string) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	iter := c.Scan(ctx, 0, prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		v, err := c.Dump(ctx, iter.Val()).Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		out[iter.Val()] = v
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
