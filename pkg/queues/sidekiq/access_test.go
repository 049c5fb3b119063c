package sidekiq_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/sidekiq"
)

// Each operation works as a user allowed only the commands and key
// patterns Access lists for it (so `chatq acl --kind sidekiq` grants
// enough).
func TestAccessSuffices(t *testing.T) {
	f := newFixture(t)
	redistest.NeedACL(t, redistest.Backend{Name: "redis", Client: f.rdb, Prefix: f.prefix})
	for _, a := range f.kind.Access() {
		t.Run(a.Op, func(t *testing.T) {
			f.must(f.rdb.FlushDB(f.ctx).Err())
			f.push("a", job("a", "r1", ""))
			f.zadd("schedule", 1795860000, job("a", "s1", ""))
			f.zadd("retry", 1795860002, job("a", "t1", failed))
			f.zadd("dead", 1795850000, job("a", "d1", failed))
			f.process("h:1:abc", ":work", "7.3.9", map[string]string{"t1": workValue("a", job("a", "w1", ""))})
			rules := []any{"+hello", "+ping", "+auth"}
			for _, c := range a.Commands {
				rules = append(rules, "+"+c)
			}
			for _, k := range a.Keys {
				rules = append(rules, "~"+k)
			}
			user := redistest.ACLUser(t, redistest.Backend{Name: "redis", Client: f.rdb, Prefix: f.prefix}, "chatqtest-"+strings.ToLower(a.Op), rules...)
			kind := sidekiq.New(queues.Env{RDB: user, Prefix: f.prefix})
			q, _ := kind.Open("a")
			if err := accessRun(f, kind, q, a.Op); err != nil {
				t.Errorf("%s as a user allowed %v on %v: %v", a.Op, a.Commands, a.Keys, err)
			}
		})
	}
}

func accessRun(f *fixture, kind *sidekiq.Kind, q queues.Queue, op string) error {
	one := func(res *queues.Result, err error) error {
		if err == nil && len(res.Done) != 1 {
			return errors.New("not done: " + strings.Join(res.Done, ","))
		}
		return err
	}
	switch op {
	case "discover":
		names, _, err := kind.Discover(f.ctx, 0, 10)
		if err == nil && len(names) != 1 {
			return errors.New("nothing discovered")
		}
		return err
	case "counts":
		c, err := q.Counts(f.ctx)
		if err == nil && (*c.Inflight != 1 || *c.Dead != 1) {
			return errors.New("wrong counts")
		}
		return err
	case "scan":
		return q.Scan(f.ctx, queues.ScanOptions{}, func([]queues.Job) error { return nil })
	case "get":
		_, err := q.Get(f.ctx, "w1")
		return err
	case "retry":
		return one(q.(queues.Retrier).Retry(f.ctx, []string{"t1"}))
	case "remove":
		return one(q.(queues.Remover).Remove(f.ctx, []string{"r1"}, false))
	case "redrive":
		return one(q.(queues.Redriver).Redrive(f.ctx, 0))
	}
	return errors.New("no test for " + op)
}
