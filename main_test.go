package main

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/cmd"
	"github.com/chatq-dev/chatq/internal/embedded"
	"github.com/chatq-dev/chatq/internal/keyspace"
	"github.com/redis/go-redis/v9"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"chatq": func() { os.Exit(cmd.Main()) },
	})
}

// TestScripts runs testdata/script/*.txtar against the chatq binary. Each
// script gets its own embedded server, or, when CHATQ_TEST_REDIS_URL is set,
// the real server under a prefix of its own whose keys are removed after.
func TestScripts(t *testing.T) {
	realURL := os.Getenv("CHATQ_TEST_REDIS_URL")
	if realURL == "" && os.Getenv("CHATQ_REQUIRE_REDIS") == "1" {
		t.Fatal("CHATQ_REQUIRE_REDIS=1 but CHATQ_TEST_REDIS_URL is not set")
	}
	p := scriptParams(connectDefault(t, realURL))
	p.Dir = "testdata/script"
	testscript.Run(t, p)
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
	opt, err := redis.ParseClusterURL(url)
	if err != nil {
		t.Fatal(err)
	}
	p := scriptParams(func(env *testscript.Env) error {
		env.Setenv("CHATQ_CLUSTER", "true")
		return useShared(env, redis.NewClusterClient(opt), url, "cluster")
	})
	p.Dir = "testdata/cluster"
	testscript.Run(t, p)
}

// connectDefault gives each script its own embedded server, or, with
// realURL, the real server under a prefix of its own.
func connectDefault(t *testing.T, realURL string) func(env *testscript.Env) error {
	if realURL == "" {
		return func(env *testscript.Env) error {
			s, err := embedded.Start("127.0.0.1:0")
			if err != nil {
				return err
			}
			env.Defer(s.Close)
			env.Setenv("CHATQ_URL", s.URL())
			env.Setenv("BACKEND", "embedded")
			return nil
		}
	}
	opt, err := redis.ParseURL(realURL)
	if err != nil {
		t.Fatal("CHATQ_TEST_REDIS_URL: ", err)
	}
	return func(env *testscript.Env) error {
		return useShared(env, redis.NewClient(opt), realURL, "redis")
	}
}

// useShared points a script at a shared server (c, reached at url) under a
// unique prefix, whose keys are deleted when the script ends.
func useShared(env *testscript.Env, c redis.UniversalClient, url, backend string) error {
	prefix := keyspace.UniquePrefix("chatqtest:" + backend + ":" + filepath.Base(env.WorkDir))
	env.Defer(func() {
		if err := keyspace.DeletePrefix(context.Background(), c, prefix); err != nil {
			env.T().Fatal("cleanup: ", err)
		}
		c.Close()
	})
	env.Setenv("CHATQ_URL", url)
	env.Setenv("CHATQ_PREFIX", prefix)
	env.Setenv("BACKEND", backend)
	return nil
}

// scriptParams sets up each script (a config home of its own, a free port,
// a server from connect) and the custom commands.
func scriptParams(connect func(env *testscript.Env) error) testscript.Params {
	return testscript.Params{
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		Setup: func(env *testscript.Env) error {
			env.Setenv("XDG_CONFIG_HOME", env.WorkDir+"/.config")
			port, err := freePort()
			if err != nil {
				return err
			}
			env.Setenv("FREEPORT", strconv.Itoa(port))
			return connect(env)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":  cmdExitCode,
			"waitredis": cmdWaitRedis,
			"fakeredis": cmdFakeRedis,
			"tlscerts":  cmdTLSCerts,
		},
	}
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

// cmdWaitRedis polls ADDR with PING until it answers, for at most 10s:
//
//	waitredis 127.0.0.1:$FREEPORT
func cmdWaitRedis(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: waitredis ADDR")
	}
	c := redis.NewClient(&redis.Options{Addr: args[0], MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
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
