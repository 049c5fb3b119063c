package e2e

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/chatqtest"
	"github.com/chatq-dev/chatq/internal/testkit/partest"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	"github.com/redis/go-redis/v9"
	"github.com/rogpeppe/go-internal/testscript"
)

// chatq's own scripts run through the public chatqtest package, so that what
// other projects import is the harness chatq itself is tested with.
func TestMain(m *testing.M) {
	unignoreInterrupt()
	testscript.Main(atRoot{m}, chatqtest.Commands())
}

// atRoot runs the tests in the repository's root, where the paths they
// name are (testdata/, docs/, scripts/, the program's package); the
// commands a script runs start in the script's own directory, as before:
// testscript.Main calls Run only in the test process, not in them.
type atRoot struct{ m *testing.M }

func (r atRoot) Run() int {
	dir, err := os.Getwd()
	for err == nil {
		if _, serr := os.Stat(filepath.Join(dir, "go.mod")); serr == nil {
			err = os.Chdir(dir)
			break
		}
		if filepath.Dir(dir) == dir {
			err = errors.New("no go.mod in the tests' directory or above")
		}
		dir = filepath.Dir(dir)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chatq's end-to-end tests:", err)
		return 1
	}
	// The scripts wait more than they compute (blocking pops, visibility
	// timeouts, the commands' --timeout), so more run at once than
	// GOMAXPROCS, go test's default.
	partest.Raise(8)
	return r.m.Run()
}

// TestScripts runs testdata/script/*.txtar against the chatq binary. Each
// script gets its own embedded server, or, when CHATQ_TEST_REDIS_URL is set,
// the real server under a prefix of its own whose keys are removed after
// (CHATQ_REQUIRE_REDIS=1 makes a missing real server fail every script).
func TestScripts(t *testing.T) {
	t.Parallel()
	p := withConnCmds(chatqtest.Params("testdata/script"))
	p.Cmds["redis"] = cmdRedis
	p.Cmds["lines"] = cmdLines
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

// cmdLines writes FILE, an input too big for a txtar file: for each SPEC
// in turn, N lines "line-K" (K numbers every line of the file from 1),
// long:N one line of N x's, binary one line that is not UTF-8, or marker
// chatq's wake-up marker.
//
//	lines $WORK/in.txt 1000 long:16777217 5
func cmdLines(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: lines FILE SPEC...")
	}
	f, err := os.Create(ts.MkAbs(args[0]))
	ts.Check(err)
	w := bufio.NewWriter(f)
	k := 0
	for _, spec := range args[1:] {
		k++
		switch {
		case spec == "binary":
			w.WriteString("\xff\xfe\n")
		case spec == "marker":
			w.WriteString(shardlist.WakeMarker + "\n")
		case strings.HasPrefix(spec, "long:"):
			n, err := strconv.Atoi(strings.TrimPrefix(spec, "long:"))
			ts.Check(err)
			w.WriteString(strings.Repeat("x", n) + "\n")
		default:
			n, err := strconv.Atoi(spec)
			ts.Check(err)
			for range n {
				fmt.Fprintf(w, "line-%d\n", k)
				k++
			}
			k--
		}
	}
	ts.Check(w.Flush())
	ts.Check(f.Close())
}
