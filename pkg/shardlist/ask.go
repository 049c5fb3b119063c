package shardlist

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync"
	"weak"

	"github.com/redis/go-redis/v9"
)

// A list's scripts declare only the list's five keys and compute their
// shard keys. While a Cluster slot moves key by key, a node importing it
// lets a script sent with ASKING read and write any key of the slot,
// arrived or not, so shards still on the old node look empty there: a push
// would write a shard that is still to come (the old node's MIGRATE of it
// then fails with BUSYKEY), a pop would miss items or find the list
// corrupt. Redis 7.4 and newer and Valkey 8 may move the five keys before
// the shards. So the package does not let a Cluster client follow ASK for
// its scripts: askHook, on each node client, answers a node's ASK to one of
// them as a TRYAGAIN refusal (the node answers ASK before it runs a
// script, so nothing ran), which go-redis and chatq send again, with
// backoff, until the slot's last key has moved and MOVED names its new
// owner. Queue and chat scripts declare every key they touch: ASK is right
// for them, and askHook leaves every other command as it is.

// hookNewNodes makes every node client rdb creates from now on, when rdb is
// a Cluster client, get askHook; New calls it, once for each client.
func hookNewNodes(rdb redis.UniversalClient) {
	if cc, ok := rdb.(*redis.ClusterClient); ok && first(&hookedClusters, cc) {
		cc.OnNewNode(func(node *redis.Client) {
			if first(&hookedNodes, node) {
				node.AddHook(askHook{})
			}
		})
	}
}

// declineASK makes sure, when rdb is a Cluster client, that the node
// serving key's slot has askHook, before a list's script is sent there: the
// node that answers ASK for a list is the one that served its slot when the
// move began, and node clients that existed before New saw rdb have no
// hook from hookNewNodes. Each node client gets the hook once.
func declineASK(ctx context.Context, rdb redis.UniversalClient, key string) {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return
	}
	if node, err := cc.MasterForKey(ctx, key); err == nil && first(&hookedNodes, node) {
		node.AddHook(askHook{})
	}
}

// hookedClusters and hookedNodes hold weak pointers to the clients that
// have their hooks, dropped when a client is collected.
var hookedClusters, hookedNodes sync.Map

// first reports whether p is not yet in m, and adds it.
func first[T any](m *sync.Map, p *T) bool {
	k := weak.Make(p)
	if _, loaded := m.LoadOrStore(k, struct{}{}); loaded {
		return false
	}
	runtime.AddCleanup(p, func(k weak.Pointer[T]) { m.Delete(k) }, k)
	return true
}

type askHook struct{}

func (askHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (askHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		var re redis.Error
		if err != nil && errors.As(err, &re) && strings.HasPrefix(re.Error(), "ASK ") && scriptOfAList(cmd.Args()) {
			err = &askDeclined{err}
			cmd.SetErr(err)
		}
		return err
	}
}

func (askHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// askDeclined is a node's ASK reply to a list's script, not followed: a
// TRYAGAIN refusal to go-redis and to its callers.
type askDeclined struct{ ask error }

func (e *askDeclined) Error() string {
	return "TRYAGAIN sharded list script not sent to a node importing its slot (" + e.ask.Error() + ")"
}

func (*askDeclined) RedisError() {}

// keySuffixes are the ends of the five keys a list's scripts declare, in
// their order (see list).
var keySuffixes = [...]string{"}:first", "}:last", "}:mid", "}:size", "}:ver"}

// scriptOfAList reports whether args are those of a list's script: EVAL or
// EVALSHA (or their _RO forms) of the five keys of one list.
func scriptOfAList(args []any) bool {
	if len(args) < 3+len(keySuffixes) {
		return false
	}
	if name, _ := args[0].(string); !strings.HasPrefix(strings.ToLower(name), "eval") {
		return false
	}
	if n, ok := args[2].(int); !ok || n != len(keySuffixes) {
		return false
	}
	var base string
	for i, suffix := range keySuffixes {
		key, _ := args[3+i].(string)
		b, ok := strings.CutSuffix(key, suffix)
		if !ok || (i > 0 && b != base) {
			return false
		}
		base = b
	}
	return true
}
