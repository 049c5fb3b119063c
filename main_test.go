package main

import (
	"os"
	"testing"

	"github.com/chatq-dev/chatq/chatqtest"
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
	testscript.Run(t, withConnCmds(chatqtest.Params("testdata/script")))
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
