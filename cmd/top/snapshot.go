package top

import (
	"context"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/snapshot"
	"github.com/redis/go-redis/v9"
)

// What top shows is read by internal/cli/snapshot, which chatq metrics shares.
type (
	Snapshot   = snapshot.Snapshot
	ServerInfo = snapshot.ServerInfo
	QueueRow   = snapshot.QueueRow
	ListRow    = snapshot.ListRow
	ChatsInfo  = snapshot.ChatsInfo
	ChatRow    = snapshot.ChatRow
	PeekRow    = snapshot.PeekRow
	Limits     = snapshot.Limits
)

// DefaultLimits are the limits of `chatq top` unless flags change them.
var DefaultLimits = snapshot.DefaultLimits

// maxPeek is the most messages the queue view asks for.
const maxPeek = snapshot.MaxPeek

// collector is top's handle on the shared collection code, with the clock
// the view also reads (tests drive it).
type collector struct {
	*snapshot.Collector
	clock func() time.Time
}

func newCollector(rdb redis.UniversalClient, ns, prefix string, cluster bool, lim Limits, interval time.Duration, clock func() time.Time) *collector {
	opt := snapshot.Options{Namespace: ns, Prefix: prefix, Cluster: cluster, Limits: lim, Interval: interval, Clock: clock}
	return &collector{snapshot.New(rdb, opt), clock}
}

// snapshot takes one snapshot (see snapshot.Collector.Snapshot).
func (c *collector) snapshot(ctx context.Context, filter, peekQueue string, peekN int) (*Snapshot, error) {
	return c.Snapshot(ctx, filter, peekQueue, peekN)
}
