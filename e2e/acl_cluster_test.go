package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/chatqtest"
	"github.com/chatq-dev/chatq/cmd"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/redis/go-redis/v9"
	"github.com/rogpeppe/go-internal/testscript"
)

// TestACLClusterScripts runs testdata/cluster/*.txtar on the Redis Cluster
// of CHATQ_TEST_CLUSTER_URL as a user that `chatq --cluster acl` made for
// the script's own prefix, set on every node (a Cluster's ACL users are
// per node): whatever chatq needs on a Cluster and the line does not grant
// fails with NOPERM. Run with CHATQ_TEST_ACL=1 (CI does).
func TestACLClusterScripts(t *testing.T) {
	if os.Getenv("CHATQ_TEST_ACL") != "1" {
		t.Skip("CHATQ_TEST_ACL=1 not set")
	}
	seed := gate(t, "CHATQ_TEST_CLUSTER_URL", "CHATQ_REQUIRE_CLUSTER")
	opt, err := redis.ParseClusterURL(seed)
	if err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClusterClient(opt)
	t.Cleanup(func() { admin.Close() })
	everyNode := func(ctx context.Context, args ...any) error {
		return admin.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error {
			return c.Do(ctx, args...).Err()
		})
	}
	p := chatqtest.ClusterParams("", seed)
	// Not covered by the line (docs/security.md): completion and top need
	// SCAN (and top INFO), as does metrics to find lists and chats (it
	// reads queues without it: TestACLReadOnly), and bench writes under
	// prefixes of its own.
	files, err := filepath.Glob("testdata/cluster/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if base := filepath.Base(f); base != "completion.txtar" && base != "top.txtar" && base != "metrics.txtar" && base != "bench.txtar" {
			p.Files = append(p.Files, f)
		}
	}
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
		if code := cmd.Run(context.Background(), []string{"--cluster", "--prefix", prefix, "--user", user, "--url", seed, "acl"},
			io, func(string) string { return "" }); code != 0 {
			return fmt.Errorf("chatq acl: exit %d: %s", code, errOut.String())
		}
		var args []any
		for _, a := range strings.Fields(out.String()) {
			args = append(args, a)
		}
		ctx := context.Background()
		if err := everyNode(ctx, args...); err != nil {
			return fmt.Errorf("%s: %v", out.String(), err)
		}
		if err := everyNode(ctx, "acl", "setuser", user, ">"+password); err != nil {
			return err
		}
		env.Defer(func() { _ = everyNode(ctx, "acl", "deluser", user) })
		env.Setenv("CHATQ_USER", user)
		env.Setenv("CHATQ_PASSWORD", password)
		return nil
	}
	testscript.Run(t, p)
}
