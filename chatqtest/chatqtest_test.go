package chatqtest_test

import (
	"context"
	"os"
	"strings"
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
