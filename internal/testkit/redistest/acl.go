package redistest

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// NeedACL skips t when the real server b has no ACL (ACL WHOAMI fails).
func NeedACL(t testing.TB, b Backend) {
	t.Helper()
	if err := b.Client.Do(context.Background(), "ACL", "WHOAMI").Err(); err != nil {
		t.Skipf("no ACL: %v", err)
	}
}

// ACLUser makes the ACL user name, unique to b's prefix, on the real server
// b with rules after "reset on" and a password, deletes it when t ends, and
// returns a client logged in as it (closed when t ends).
func ACLUser(t testing.TB, b Backend, name string, rules ...any) *redis.Client {
	t.Helper()
	ctx := context.Background()
	name += strings.ReplaceAll(b.Prefix, ":", "-")
	args := append([]any{"ACL", "SETUSER", name, "reset", "on", ">pw"}, rules...)
	if err := b.Client.Do(ctx, args...).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Client.Do(context.Background(), "ACL", "DELUSER", name) })
	opt := *b.Client.Options()
	opt.Username, opt.Password = name, "pw"
	c := redis.NewClient(&opt)
	t.Cleanup(func() { c.Close() })
	return c
}

// Contents is every key under prefix with its value (DUMP), sorted: the
// same before and after an operation that changed nothing.
func Contents(t testing.TB, c *redis.Client, prefix string) string {
	t.Helper()
	ctx := context.Background()
	keys, err := c.Keys(ctx, prefix+"*").Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	var out []string
	for _, k := range keys {
		out = append(out, k+"="+c.Dump(ctx, k).Val())
	}
	return strings.Join(out, "\n")
}

// Op is an operation of a package's Access: its name, whether it writes,
// and the commands it sends.
type Op struct {
	Name     string
	Write    bool
	Commands []string
}

// Refusals checks the rule that a refused command changes nothing, on the
// real server b: for each operation of ops that writes, and each of its
// commands listed in writes, it runs run[operation] as a user refused that
// command alone (every key and channel allowed), and fails unless the
// operation failed and left the keys under b.Prefix as they were. An
// operation that writes and has no entry in run fails t (so that a new one
// gets a case). skip, when not nil, returns why a case is skipped, or "";
// a case for which may(op, command) is true may succeed instead (the
// command is needed on another path).
func Refusals(t *testing.T, b Backend, ops []Op, writes []string, run map[string]func(*redis.Client) error,
	skip func(op, command string) string, may func(op, command string) bool) {
	t.Helper()
	NeedACL(t, b)
	for _, o := range ops {
		if !o.Write {
			continue
		}
		fn, ok := run[o.Name]
		if !ok {
			t.Errorf("no case for %s: add one", o.Name)
			continue
		}
		for _, cmd := range o.Commands {
			if !slices.Contains(writes, cmd) {
				continue
			}
			t.Run(o.Name+"/"+cmd, func(t *testing.T) {
				if skip != nil {
					if why := skip(o.Name, cmd); why != "" {
						t.Skip(why)
					}
				}
				user := ACLUser(t, b, "chatqtest-no-"+cmd, "~*", "&*", "+@all", "-"+cmd)
				before := Contents(t, b.Client, b.Prefix)
				err := fn(user)
				if err == nil && may != nil && may(o.Name, cmd) {
					return
				}
				if after := Contents(t, b.Client, b.Prefix); after != before {
					t.Fatalf("without %s, %s (%v) changed:\n%s\nto\n%s", cmd, o.Name, err, before, after)
				}
				if err == nil {
					t.Fatalf("without %s, %s succeeded", cmd, o.Name)
				}
			})
		}
	}
}
