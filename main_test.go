package main

import (
	"context"
	"os"
	"testing"

	"github.com/chatq-dev/chatq/chatqtest"
	"github.com/redis/go-redis/v9"
	"github.com/rogpeppe/go-internal/testscript"
)

// chatq's own scripts run through the public chatqtest package, so that what
// other projects import is the harness chatq itself is tested with.
func TestMain(m *testing.M) {
	testscript.Main(m, chatqtest.Commands())
}

// TestScripts runs testdata/script/*.txtar against the chatq binary. Each
// script gets its own embedded server, or, when CHATQ_TEST_REDIS_URL is set,
// the real server under a prefix of its own whose keys are removed after
// (CHATQ_REQUIRE_REDIS=1 makes a missing real server fail every script).
func TestScripts(t *testing.T) {
	p := withConnCmds(chatqtest.Params("testdata/script"))
	p.Cmds["redis"] = cmdRedis
	testscript.Run(t, p)
}

// cmdRedis runs one Redis command on the script's server ($CHATQ_URL), to
// set up state chatq would not write (a plain LIST, a corrupted key); the
// reply goes to the script's log:
//
//	redis SET ${CHATQ_PREFIX}{jobs}:last 10000000
func cmdRedis(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) == 0 {
		ts.Fatalf("usage: redis COMMAND [ARG...]")
	}
	opt, err := redis.ParseURL(ts.Getenv("CHATQ_URL"))
	if err != nil {
		ts.Fatalf("redis: %v", err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	cmdArgs := make([]any, len(args))
	for i, a := range args {
		cmdArgs[i] = a
	}
	res, err := c.Do(context.Background(), cmdArgs...).Result()
	if (err != nil) != neg {
		ts.Fatalf("redis %v: %v, %v", args, res, err)
	}
	ts.Logf("%v", res)
}

// TestClusterScripts runs testdata/cluster/*.txtar against the Redis Cluster
// named by CHATQ_TEST_CLUSTER_URL (a --cluster seed URL), each under a prefix
// of its own. CI starts a three-node cluster for it and sets
// CHATQ_REQUIRE_CLUSTER=1, so that a missing cluster fails rather than skips.
func TestClusterScripts(t *testing.T) {
	url := os.Getenv("CHATQ_TEST_CLUSTER_URL")
	if url == "" {
		if os.Getenv("CHATQ_REQUIRE_CLUSTER") == "1" {
			t.Fatal("CHATQ_REQUIRE_CLUSTER=1 but CHATQ_TEST_CLUSTER_URL is not set")
		}
		t.Skip("CHATQ_TEST_CLUSTER_URL not set: no Redis Cluster to test against")
	}
	testscript.Run(t, chatqtest.ClusterParams("testdata/cluster", url))
}
