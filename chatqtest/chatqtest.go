// Package chatqtest lets a Go project drive chatq from its own testscript
// (txtar) end-to-end tests: seed chat inboxes, queues and sharded lists,
// run the project's programs, and assert on what they left behind.
//
// chatq runs as a command inside the test binary (no build step, nothing on
// PATH), and each script gets a server of its own:
//
//	func TestMain(m *testing.M) {
//		testscript.Main(m, chatqtest.Commands())
//	}
//
//	func TestScripts(t *testing.T) {
//		testscript.Run(t, chatqtest.Params("testdata/script"))
//	}
//
// and in testdata/script/seed.txtar:
//
//	exec chatq queue create jobs
//	exec chatq queue push jobs 'resize 42'
//	exec chatq queue stats jobs -o json
//	stdoutjq '.msgs == 1'
//
// # Servers
//
// By default each script starts an embedded in-memory server (miniredis, as
// `chatq dev` runs) and stops it at the end; no Redis is needed. When the
// environment variable CHATQ_TEST_REDIS_URL names a real server
// (redis://host:port/db), every script runs on it instead, under a key prefix
// of its own (CHATQ_PREFIX), and the keys under that prefix are deleted when
// the script ends: scripts can run in parallel on one shared server and
// leave nothing behind. With CHATQ_REQUIRE_REDIS=1 and no
// CHATQ_TEST_REDIS_URL every script fails instead of using the embedded
// server, so that CI cannot silently test the wrong thing. ClusterParams runs
// scripts on a Redis Cluster the same way.
//
// # What a script gets
//
// Environment:
//
//	CHATQ_URL        the server's URL; chatq reads it, and so can your programs
//	CHATQ_PREFIX     on a real server: the script's key prefix (unset on the
//	                 embedded server, which is the script's alone)
//	CHATQ_CLUSTER    "true" on a Redis Cluster (ClusterParams)
//	BACKEND          "embedded", "redis" or "cluster"
//	FREEPORT         a loopback TCP port nothing listened on at the start
//	XDG_CONFIG_HOME  $WORK/.config, so no user's chatq config file is read
//
// Commands, besides testscript's own:
//
//	exitcode N cmd [args...]  run cmd (as exec does) and require exit code N;
//	                          its stdout and stderr are kept for the next
//	                          stdout/stderr checks
//	waitredis ADDR            wait until a Redis server at host:port answers
//	                          PING (for one a script starts in the background,
//	                          such as `exec chatq dev --addr 127.0.0.1:$FREEPORT &`)
//	stdoutjq EXPR             require the last command's stdout to be exactly
//	                          one JSON value (nothing before or after it) and
//	                          the jq expression EXPR to yield true for it:
//	                          stdoutjq '.msgs == 1 and .hiddenmsgs == 0'
//	stdoutjq -lines EXPR      the same for JSON Lines (chat watch, queue work,
//	                          export): each line exactly one JSON value; EXPR
//	                          sees them as one array: stdoutjq -lines 'length == 3'
//
// With `!`, stdoutjq requires EXPR to yield false; stdout that is not JSON
// fails either way.
//
// Conditions: [embedded] is true on the embedded server, [redis] on a real
// server (standalone or Cluster), [cluster] on a Redis Cluster; so
// `[!redis] skip` keeps a script that needs a real server's behaviour off the
// embedded one.
//
// The Params enforce RequireExplicitExec (write `exec chatq …`) and
// RequireUniqueNames. A caller can extend what it gets: add entries to Cmds,
// set UpdateScripts, or wrap Setup and Condition, calling the ones it got.
package chatqtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/chatq-dev/chatq/cmd"
	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/cli/embedded"
	"github.com/chatq-dev/chatq/internal/cli/jsonfilter"
	"github.com/redis/go-redis/v9"
	"github.com/rogpeppe/go-internal/testscript"
)

// Commands returns the programs a test binary provides to its scripts, for
// testscript.Main: "chatq" runs chatq itself. Add your own programs to the
// map before passing it on.
func Commands() map[string]func() {
	return map[string]func(){
		"chatq": func() { os.Exit(cmd.Main()) },
	}
}

// Params returns the testscript parameters for the scripts in dir: each
// script gets its own embedded server, or, when CHATQ_TEST_REDIS_URL is set,
// that real server under a unique CHATQ_PREFIX whose keys are deleted after
// the script. See the package documentation for what a script gets.
func Params(dir string) testscript.Params {
	url := os.Getenv("CHATQ_TEST_REDIS_URL")
	if url == "" {
		var connect func(env *testscript.Env) error = useEmbedded
		if os.Getenv("CHATQ_REQUIRE_REDIS") == "1" {
			connect = failing(errors.New("CHATQ_REQUIRE_REDIS=1 but CHATQ_TEST_REDIS_URL is not set"))
		}
		return params(dir, backendEmbedded, connect)
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		return params(dir, backendRedis, failing(fmt.Errorf("CHATQ_TEST_REDIS_URL: %w", err)))
	}
	return params(dir, backendRedis, func(env *testscript.Env) error {
		o := *opt // NewClient writes to its options; scripts run in parallel
		return useShared(env, redis.NewClient(&o), url, backendRedis)
	})
}

// ClusterParams is Params for a Redis Cluster: every script in dir runs on
// the cluster reached through seedURL (redis://host:port?addr=host2:port2…,
// as chatq --cluster takes it), under a unique CHATQ_PREFIX whose keys are
// deleted after the script, with CHATQ_CLUSTER=true.
func ClusterParams(dir, seedURL string) testscript.Params {
	opt, err := redis.ParseClusterURL(seedURL)
	if err != nil {
		return params(dir, backendCluster, failing(fmt.Errorf("cluster URL: %w", err)))
	}
	return params(dir, backendCluster, func(env *testscript.Env) error {
		env.Setenv("CHATQ_CLUSTER", "true")
		o := *opt // NewClusterClient writes to its options; scripts run in parallel
		return useShared(env, redis.NewClusterClient(&o), seedURL, backendCluster)
	})
}

const (
	backendEmbedded = "embedded"
	backendRedis    = "redis"
	backendCluster  = "cluster"
)

// params sets up each script (a config home of its own, a free port, a
// server from connect) with the commands and the backend's conditions.
func params(dir, backend string, connect func(env *testscript.Env) error) testscript.Params {
	return testscript.Params{
		Dir:                 dir,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("XDG_CONFIG_HOME", filepath.Join(env.WorkDir, ".config"))
			port, err := freePort()
			if err != nil {
				return err
			}
			env.Setenv("FREEPORT", strconv.Itoa(port))
			env.Setenv("BACKEND", backend)
			return connect(env)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cmdExitCode,
			"waitredis": cmdWaitRedis,
			"stdoutjq":  cmdStdoutJQ,
		},
		Condition: func(cond string) (bool, error) {
			switch cond {
			case backendEmbedded:
				return backend == backendEmbedded, nil
			case backendRedis:
				return backend != backendEmbedded, nil
			case backendCluster:
				return backend == backendCluster, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
	}
}

// failing is a setup that fails every script with err, so that a bad
// configuration is reported by each script rather than ignored.
func failing(err error) func(env *testscript.Env) error {
	return func(*testscript.Env) error { return err }
}

// useEmbedded starts an embedded server for the script.
func useEmbedded(env *testscript.Env) error {
	s, err := embedded.Start("127.0.0.1:0")
	if err != nil {
		return err
	}
	env.Defer(s.Close)
	env.Setenv("CHATQ_URL", s.URL())
	return nil
}

// useShared points a script at a shared server (c, reached at url) under a
// unique prefix, whose keys are deleted when the script ends.
func useShared(env *testscript.Env, c redis.UniversalClient, url, backend string) error {
	prefix := keyspace.UniquePrefix("chatqtest:" + backend + ":" + filepath.Base(env.WorkDir))
	env.Defer(func() {
		defer c.Close()
		if err := keyspace.DeletePrefix(context.Background(), c, prefix); err != nil {
			env.T().Fatal("cleanup of ", prefix, "*: ", err)
		}
	})
	env.Setenv("CHATQ_URL", url)
	env.Setenv("CHATQ_PREFIX", prefix)
	return nil
}

// cmdExitCode runs a command and checks its exact exit code:
//
//	exitcode 2 chatq --bogus
//
// Its stdout and stderr are kept for the next stdout/stderr checks.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! exitcode")
	}
	if len(args) < 2 {
		ts.Fatalf("usage: exitcode N command [args...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exitcode: bad code %q", args[0])
	}
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("exitcode: %v", err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Logf("[stdout]\n%s", ts.ReadFile("stdout"))
		ts.Logf("[stderr]\n%s", ts.ReadFile("stderr"))
		ts.Fatalf("exit code %d, want %d", got, want)
	}
}

// cmdStdoutJQ checks the last command's stdout as JSON with a jq
// expression (see the package documentation).
func cmdStdoutJQ(ts *testscript.TestScript, neg bool, args []string) {
	lines := len(args) == 2 && args[0] == "-lines"
	if lines {
		args = args[1:]
	}
	if len(args) != 1 {
		ts.Fatalf("usage: stdoutjq [-lines] EXPR")
	}
	f, err := jsonfilter.JQ(args[0], os.Environ)
	if err != nil {
		ts.Fatalf("stdoutjq: %v", err)
	}
	out := ts.ReadFile("stdout")
	var v any
	if lines {
		var vs []any
		vs, err = jsonfilter.DecodeLines([]byte(out))
		v = vs
	} else {
		v, err = jsonfilter.DecodeOne([]byte(out))
	}
	if err != nil {
		ts.Logf("[stdout]\n%s", out)
		ts.Fatalf("stdoutjq: stdout: %v", err)
	}
	got, err := f.Eval(v)
	if err != nil {
		ts.Logf("[stdout]\n%s", out)
		ts.Fatalf("stdoutjq %s: %v", args[0], err)
	}
	want := !neg
	for _, r := range got {
		if b, ok := r.(bool); !ok || b != want {
			ts.Logf("[stdout]\n%s", out)
			ts.Fatalf("stdoutjq %s: got %s, want %v", args[0], jsonText(got), want)
		}
	}
	if len(got) == 0 {
		ts.Logf("[stdout]\n%s", out)
		ts.Fatalf("stdoutjq %s: yields nothing, want %v", args[0], want)
	}
}

// jsonText renders values as JSON for a failure message.
func jsonText(vs []any) string {
	b, err := json.Marshal(vs)
	if err != nil {
		return fmt.Sprint(vs)
	}
	return string(b)
}

// waitRedisLimit bounds waitredis. It only decides how long a broken script
// takes to fail, so it is generous for a slow, shared machine.
const waitRedisLimit = 30 * time.Second

// cmdWaitRedis polls ADDR with PING until it answers:
//
//	waitredis 127.0.0.1:$FREEPORT
func cmdWaitRedis(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitredis ADDR")
	}
	c := redis.NewClient(&redis.Options{Addr: args[0], MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(waitRedisLimit)
	for {
		err := c.Ping(context.Background()).Err()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitredis %s: %v", args[0], err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freePort returns a loopback TCP port nothing listens on right now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
