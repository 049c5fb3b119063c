package celery_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/celery"
)

// TestAccessSuffices runs every operation as an ACL user allowed only
// the commands and keys Access lists for it (a script's own calls are
// checked against the user too), so `chatq acl` grants what each needs.
func TestAccessSuffices(t *testing.T) {
	f := newFixture(t, "env:")
	now := time.Now()
	f.bind("p:", "celery", "celery", "celery")
	f.push("p:", task{id: "r1", name: "t", queue: "celery", exchange: "celery"})
	f.push("p:", task{id: "r2", name: "t", queue: "celery", exchange: "celery"})
	f.deliver("p:", task{id: "old", name: "t", queue: "celery", exchange: "celery"}, now.Add(-2*time.Hour))
	f.deliver("p:", task{id: "young", name: "t", queue: "celery", exchange: "celery"}, now)
	b := redistest.Backend{Name: "redis", Client: f.rdb, Prefix: "acl:"}
	redistest.NeedACL(t, b)
	ctx := context.Background()
	run := map[string]func(k *celery.Kind) error{
		"discover": func(k *celery.Kind) error { _, _, err := k.Discover(ctx, 0, 100); return err },
		"counts": func(k *celery.Kind) error {
			q, _ := k.Open("p:|celery")
			_, err := q.Counts(ctx)
			return err
		},
		"scan": func(k *celery.Kind) error {
			q, _ := k.Open("p:|celery")
			return q.Scan(ctx, queues.ScanOptions{}, func([]queues.Job) error { return nil })
		},
		"get": func(k *celery.Kind) error {
			q, _ := k.Open("p:|celery")
			_, err := q.Get(ctx, "young")
			return err
		},
		"remove": func(k *celery.Kind) error {
			q, _ := k.Open("p:|celery")
			res, err := q.(queues.Remover).Remove(ctx, []string{"r1", "young"}, true)
			if err == nil && len(res.Done) != 2 {
				t.Errorf("remove: %+v", res)
			}
			return err
		},
		"recover": func(k *celery.Kind) error {
			q, _ := k.Open("p:|celery")
			res, err := q.(queues.Recoverer).Recover(ctx, queues.RecoverOptions{})
			if err == nil && len(res.Done) != 1 {
				t.Errorf("recover: %+v", res)
			}
			return err
		},
		"purge": func(k *celery.Kind) error {
			q, _ := k.Open("p:|celery")
			n, err := q.(queues.Purger).Purge(ctx, -1)
			if err == nil && n == 0 {
				t.Errorf("purge: nothing purged")
			}
			return err
		},
	}
	for _, a := range celery.New(queues.Env{Prefix: "env:"}).Access() {
		fn, ok := run[a.Op]
		if !ok {
			t.Errorf("Access lists %q, which the test does not run", a.Op)
			continue
		}
		rules := []any{}
		for _, c := range a.Commands {
			rules = append(rules, "+"+c)
		}
		for _, k := range a.Keys {
			rules = append(rules, "~"+k)
		}
		c := redistest.ACLUser(t, b, "celery-"+a.Op, append(rules, "+ping", "+hello", "+client")...)
		if err := fn(celery.New(queues.Env{RDB: c, Prefix: "env:"})); err != nil && !strings.Contains(err.Error(), "not found") {
			t.Errorf("%s as a user allowed %v: %v", a.Op, a.Commands, err)
		}
		delete(run, a.Op)
	}
	for op := range run {
		t.Errorf("Access does not list %q", op)
	}
}
