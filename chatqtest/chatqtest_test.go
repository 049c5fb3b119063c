package chatqtest_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/chatq-dev/chatq/chatqtest"
	"github.com/redis/go-redis/v9"
	"github.com/rogpeppe/go-internal/testscript"
)

func TestMain(m *testing.M) {
	testscript.Main(m, chatqtest.Commands())
}

// TestParams runs testdata/script/*.txtar with the Params extended as
// docs/testing.md shows: an added command and a wrapped Setup. On a real
// server it then checks that the scripts' keys are gone.
func TestParams(t *testing.T) {
	t.Run("scripts", func(t *testing.T) {
		p := chatqtest.Params("testdata/script")
		// extended Q: the wrapped Setup ran, and queue Q exists.
		p.Cmds["extended"] = func(ts *testscript.TestScript, neg bool, args []string) {
			if ts.Getenv("WORKER_QUEUE") != "jobs" {
				ts.Fatalf("the wrapped Setup did not run")
			}
			ts.Check(ts.Exec("chatq", "queue", "stats", args[0]))
		}
		setup := p.Setup
		p.Setup = func(env *testscript.Env) error {
			if err := setup(env); err != nil {
				return err
			}
			env.Setenv("WORKER_QUEUE", "jobs") // your program's own settings
			return nil
		}
		testscript.Run(t, p)
	})

	url := os.Getenv("CHATQ_TEST_REDIS_URL")
	if url == "" {
		return
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	var keys []string
	ctx := context.Background()
	iter := c.Scan(ctx, 0, "chatqtest:redis:script-harness:*", 1000).Iterator()
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	if len(keys) > 0 {
		t.Errorf("keys left after the scripts: %s", strings.Join(keys, " "))
	}
}

// recordingT runs scripts as testscript.T and records whether they failed
// and what they logged, for checking scripts that must fail.
type recordingT struct {
	mu     sync.Mutex
	failed bool
	log    strings.Builder
}

func (r *recordingT) Skip(a ...any)  { runtime.Goexit() }
func (r *recordingT) Fatal(a ...any) { r.Log(a...); r.FailNow() }
func (r *recordingT) Parallel()      {}
func (r *recordingT) Verbose() bool  { return false }
func (r *recordingT) Log(a ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	fmt.Fprintln(&r.log, a...)
}
func (r *recordingT) FailNow() {
	r.mu.Lock()
	r.failed = true
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recordingT) Run(name string, f func(testscript.T)) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
}

// stdoutjq fails when stdout is not exactly one JSON value (a table row
// before it, two values, nothing), when the expression is false or not a
// boolean, and when it does not compile.
func TestStdoutJQFails(t *testing.T) {
	for _, tt := range []struct{ script, want string }{
		{"exec printf 'a\\tb\\n{\"n\":1}\\n'\nstdoutjq '.n == 1'", "not one JSON value"},
		{"exec printf '{\"n\":1}\\n{\"n\":2}\\n'\nstdoutjq '.n == 1'", "more after the first"},
		{"exec printf ''\nstdoutjq 'true'", "the output is empty"},
		{"exec printf '{\"n\":1}\\n'\nstdoutjq '.n == 2'", "got [false], want true"},
		{"exec printf '{\"n\":1}\\n'\n! stdoutjq '.n == 1'", "got [true], want false"},
		{"exec printf '{\"n\":1}\\n'\nstdoutjq '.n'", "got [1], want true"},
		{"exec printf '{\"n\":1}\\n'\nstdoutjq 'empty'", "yields nothing"},
		{"exec printf '{\"n\":1}\\n'\nstdoutjq '.n =='", "invalid --jq expression"},
		{"exec printf '{\"n\":1}\\n'\n! stdoutjq '.[0]'", "expected an array"},
		{"exec printf '{\"n\":1}\\n{\"n\":2}'\nstdoutjq -lines 'length == 2'", "the last line has no newline"},
		{"exec printf 'x\\n'\n! stdoutjq -lines 'false'", "line 1: not one JSON value"},
		{"exec printf '{\"n\":1}\\n'\nstdoutjq '.n == 1'", ""}, // passes: the recorder sees no failure
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "s.txtar"), []byte(tt.script+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		rt := &recordingT{}
		p := chatqtest.Params(dir)
		p.Setup = nil // no server needed
		testscript.RunT(rt, p)
		if tt.want == "" {
			if rt.failed {
				t.Errorf("script %q failed:\n%s", tt.script, rt.log.String())
			}
			continue
		}
		if !rt.failed || !strings.Contains(rt.log.String(), tt.want) {
			t.Errorf("script %q: failed %v, want a failure saying %q; log:\n%s", tt.script, rt.failed, tt.want, rt.log.String())
		}
	}
}
