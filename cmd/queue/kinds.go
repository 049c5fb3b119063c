package queue

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/queuekinds"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/spf13/cobra"
)

// kindsClient returns the constructor of cmd's registry of queue kinds
// (internal/cli/queuekinds): RSMQ's through cmd's queue client (--namespace),
// and every other kind under --prefix.
func kindsClient(f *cmdutil.Factory, cmd *cobra.Command) func() (*queues.Registry, error) {
	qc := queueClient(f, cmd)
	return func() (*queues.Registry, error) {
		q, err := qc()
		if err != nil {
			return nil, err
		}
		rdb, err := f.Client()
		if err != nil {
			return nil, err
		}
		return queuekinds.New(q, queues.Env{RDB: rdb, Prefix: f.Prefix()}), nil
	}
}

// discoverPage is the COUNT of each discovery call.
const discoverPage = 500

// discover returns the queues of every kind in reg (or of kind only),
// each kind's sorted by address, walking each kind's discovery to the end
// of a cycle in bounded calls (a name found twice is listed once). A kind
// whose discovery this user may not run (an ACL user made for RSMQ's
// queues has no SCAN, nor the other libraries' keys) is left out when no
// kind was asked for, and named in refused.
func discover(ctx context.Context, reg *queues.Registry, kind string) ([]listed, error) {
	out, _, err := discoverAll(ctx, reg, kind)
	return out, err
}

// discoverAll is discover, also returning the kinds left out for want of
// permission.
func discoverAll(ctx context.Context, reg *queues.Registry, kind string) (out []listed, refused []string, err error) {
	kinds := reg.Kinds()
	if kind != "" {
		k, err := reg.Kind(kind)
		if err != nil {
			return nil, nil, cmdutil.UsageErr(err)
		}
		kinds = []queues.Kind{k}
	}
kinds:
	for _, k := range kinds {
		seen := map[string]bool{}
		var cursor uint64
		for {
			page, next, err := k.Discover(ctx, cursor, discoverPage)
			if err != nil && kind == "" && k.Name() != "rsmq" && conn.PermissionDenied(err) {
				refused = append(refused, k.Name())
				continue kinds
			}
			if err != nil {
				return nil, nil, err
			}
			for _, n := range page {
				seen[n] = true
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
		for _, n := range slices.Sorted(maps.Keys(seen)) {
			out = append(out, listed{kind: k, address: address(k, n)})
		}
	}
	return out, refused, nil
}

// address is the address of kind k's queue name: RSMQ's plain, others
// KIND:NAME.
func address(k queues.Kind, name string) string {
	if k.Name() == "rsmq" {
		return name
	}
	return k.Name() + ":" + name
}

// isKindAddress reports whether q addresses a queue of a known kind other
// than RSMQ's (whose names hold no ':', so that another address is an
// invalid RSMQ name).
func isKindAddress(q string) bool {
	kind, _ := queues.Parse(q)
	return kind != "rsmq" && slices.Contains(queuekinds.Names, kind)
}

// checkName checks an RSMQ queue name (delayq.CheckName), saying what a
// name with ':' is when it is not one: another kind's address, which only
// the commands that reach every kind take, or an unknown kind.
func checkName(q string) error {
	err := delayq.CheckName(q)
	if err == nil || !strings.Contains(q, ":") {
		return err
	}
	if isKindAddress(q) {
		return cmdutil.WithHint(cmdutil.UsageErrorf("%s is a queue of another kind: this command is for RSMQ queues only", q),
			"its library's producers and workers write it; chatq reads it, and retry, rm, redrive, pause, resume and recover act on it (docs/kinds.md)")
	}
	kind, _ := queues.Parse(q)
	return cmdutil.WithHint(err, fmt.Sprintf("%q is no queue kind chatq knows: a queue is NAME (RSMQ's) or KIND:NAME with KIND one of %s", kind, strings.Join(queuekinds.Names[1:], ", ")))
}
