package redistest

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// nodeClient is a client of one node that never retries: a test helper that
// moves slots must see every refusal.
func nodeClient(s *Server) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, Protocol: 2, TLSConfig: s.tls})
}

// Slot is the cluster hash slot of key, computed by a node (CLUSTER KEYSLOT),
// so that it follows the server's rules for hash tags.
func (c *Cluster) Slot(ctx context.Context, key string) (int, error) {
	for _, s := range c.Nodes {
		if s.cmd == nil {
			continue
		}
		cl := nodeClient(s)
		slot, err := cl.ClusterKeySlot(ctx, key).Result()
		cl.Close()
		if err == nil {
			return int(slot), nil
		}
	}
	return 0, fmt.Errorf("CLUSTER KEYSLOT %s: no node answered", key)
}

// NodeID is the node's cluster id (CLUSTER MYID).
func (s *Server) NodeID(ctx context.Context) (string, error) {
	cl := nodeClient(s)
	defer cl.Close()
	return cl.Do(ctx, "cluster", "myid").Text()
}

// Owner returns the node that serves slot, as the first live node that
// answers CLUSTER SLOTS sees it.
func (c *Cluster) Owner(ctx context.Context, slot int) (*Server, error) {
	var last error
	for _, s := range c.Nodes {
		if s.cmd == nil {
			continue
		}
		owner, err := c.ownerAsSeenBy(ctx, s, slot)
		if err == nil {
			return owner, nil
		}
		last = err
	}
	return nil, fmt.Errorf("owner of slot %d: %w", slot, last)
}

func (c *Cluster) ownerAsSeenBy(ctx context.Context, s *Server, slot int) (*Server, error) {
	cl := nodeClient(s)
	defer cl.Close()
	ranges, err := cl.ClusterSlots(ctx).Result()
	if err != nil {
		return nil, err
	}
	for _, r := range ranges {
		if r.Start <= slot && slot <= r.End && len(r.Nodes) > 0 {
			if owner := c.byAddr(r.Nodes[0].Addr); owner != nil {
				return owner, nil
			}
			return nil, fmt.Errorf("%s says %s serves slot %d, not one of this cluster's nodes", s.Addr(), r.Nodes[0].Addr, slot)
		}
	}
	return nil, fmt.Errorf("%s says no node serves slot %d", s.Addr(), slot)
}

func (c *Cluster) byAddr(addr string) *Server {
	for _, s := range c.Nodes {
		if s.Addr() == addr || s.announced() == addr {
			return s
		}
	}
	return nil
}

// Masters returns the live nodes that are masters now (ROLE).
func (c *Cluster) Masters(ctx context.Context) []*Server { return c.withRole(ctx, "master") }

// Replicas returns the live nodes that are replicas now (ROLE).
func (c *Cluster) Replicas(ctx context.Context) []*Server { return c.withRole(ctx, "slave") }

// withRole returns the live nodes whose ROLE reply names role.
func (c *Cluster) withRole(ctx context.Context, role string) []*Server {
	var out []*Server
	for _, s := range c.Nodes {
		if s.cmd == nil {
			continue
		}
		cl := nodeClient(s)
		r, err := cl.Do(ctx, "role").Slice()
		cl.Close()
		if err == nil && len(r) > 0 && r[0] == role {
			out = append(out, s)
		}
	}
	return out
}

// MigrateOptions tunes MigrateSlot.
type MigrateOptions struct {
	// AfterKey, when set, runs after each key has moved, while the slot is
	// split between the two nodes (a test pauses there, or checks).
	AfterKey func()
	// Timeout bounds the whole migration (default one minute).
	Timeout time.Duration
}

// MigrateSlot moves slot from the master that serves it to dst, live, the
// way `redis-cli --cluster reshard` does, but one key per MIGRATE so that
// clients meet the slot split between the nodes for as long as possible:
// CLUSTER SETSLOT IMPORTING on dst and MIGRATING on the source, then each
// key the source still holds (CLUSTER GETKEYSINSLOT) moved by MIGRATE, until
// none is left, then CLUSTER SETSLOT NODE on dst, the source and every
// other master. Meanwhile the source answers ASK for keys it no longer
// holds and dst TRYAGAIN for a multi-key command whose keys it holds only
// in part. It returns once every live node says dst serves the slot. It
// does nothing when dst serves it already.
func (c *Cluster) MigrateSlot(ctx context.Context, slot int, dst *Server, opt MigrateOptions) error {
	if opt.Timeout <= 0 {
		opt.Timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	src, err := c.Owner(ctx, slot)
	if err != nil {
		return err
	}
	if src == dst {
		return nil
	}
	srcID, err := src.NodeID(ctx)
	if err != nil {
		return err
	}
	dstID, err := dst.NodeID(ctx)
	if err != nil {
		return err
	}
	sc, dc := nodeClient(src), nodeClient(dst)
	defer sc.Close()
	defer dc.Close()
	if err := dc.Do(ctx, "cluster", "setslot", slot, "importing", srcID).Err(); err != nil {
		return fmt.Errorf("SETSLOT %d IMPORTING on %s: %w", slot, dst.Addr(), err)
	}
	if err := sc.Do(ctx, "cluster", "setslot", slot, "migrating", dstID).Err(); err != nil {
		return fmt.Errorf("SETSLOT %d MIGRATING on %s: %w", slot, src.Addr(), err)
	}
	for {
		// MIGRATE goes straight to dst's own port, never through a proxy
		// a test put in front of it.
		if err := c.moveKeys(ctx, sc, slot, "127.0.0.1", dst.Port, opt.AfterKey); err != nil {
			return err
		}
		// The target first, as Redis's documentation advises, so that
		// the source never redirects to a node that does not yet know it
		// owns the slot. A source that still holds a key (one written
		// since the last GETKEYSINSLOT) refuses: move the rest and retry.
		if err := dc.Do(ctx, "cluster", "setslot", slot, "node", dstID).Err(); err != nil {
			return fmt.Errorf("SETSLOT %d NODE on %s: %w", slot, dst.Addr(), err)
		}
		err := sc.Do(ctx, "cluster", "setslot", slot, "node", dstID).Err()
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "still hold keys") {
			return fmt.Errorf("SETSLOT %d NODE on %s: %w", slot, src.Addr(), err)
		}
	}
	for _, m := range c.Masters(ctx) {
		if m == src || m == dst {
			continue
		}
		cl := nodeClient(m)
		err := cl.Do(ctx, "cluster", "setslot", slot, "node", dstID).Err()
		cl.Close()
		if err != nil {
			return fmt.Errorf("SETSLOT %d NODE on %s: %w", slot, m.Addr(), err)
		}
	}
	return c.waitOwner(ctx, slot, dst)
}

// moveKeys MIGRATEs, one at a time, every key of slot the source (sc) still
// holds.
func (c *Cluster) moveKeys(ctx context.Context, sc *redis.Client, slot int, host string, port int, after func()) error {
	for {
		keys, err := sc.ClusterGetKeysInSlot(ctx, slot, 1).Result()
		if err != nil {
			return fmt.Errorf("GETKEYSINSLOT %d: %w", slot, err)
		}
		if len(keys) == 0 {
			return nil
		}
		// NOKEY: the key went away since GETKEYSINSLOT (a pop emptied
		// it), which is fine. BUSYKEY would mean the target has the key
		// already: a bug worth failing on, so no REPLACE.
		err = sc.Do(ctx, "migrate", host, port, keys[0], 0, 10000).Err()
		if err != nil && !strings.Contains(err.Error(), "NOKEY") {
			if ctx.Err() != nil {
				return fmt.Errorf("MIGRATE %s: %w (%v)", keys[0], err, ctx.Err())
			}
			if strings.HasPrefix(err.Error(), "IOERR") {
				continue // the target was slow to answer: the key stays, try again
			}
			if strings.Contains(err.Error(), "CLUSTERDOWN") {
				// A node is failing (frozen, say), here or on the
				// target ("Target instance replied with error:
				// CLUSTERDOWN"): the key stays; try again until the
				// cluster is up.
				time.Sleep(100 * time.Millisecond)
				continue
			}
			return fmt.Errorf("MIGRATE %s: %w", keys[0], err)
		}
		if after != nil {
			after()
		}
	}
}

// waitOwner waits until every live node says dst serves slot.
func (c *Cluster) waitOwner(ctx context.Context, slot int, dst *Server) error {
	for _, s := range c.Nodes {
		if s.cmd == nil {
			continue
		}
		for {
			owner, err := c.ownerAsSeenBy(ctx, s, slot)
			if err == nil && owner == dst {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("slot %d: %s does not see %s as its owner: %v %v", slot, s.Addr(), dst.Addr(), owner, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// announced is the address the node gives clients: its own, or the one
// set with cluster-announce-port (a node behind a fault proxy).
func (s *Server) announced() string {
	for i, a := range s.args {
		if a == "--cluster-announce-port" && i+1 < len(s.args) {
			return "127.0.0.1:" + s.args[i+1]
		}
	}
	return "127.0.0.1:" + strconv.Itoa(s.Port)
}

// Redirects sums, over the live nodes, the error replies that tell a client
// to go elsewhere or try again (INFO errorstats, Redis 6.2 and later): how
// often ASK, MOVED, TRYAGAIN and CLUSTERDOWN were answered since the nodes
// started.
func (c *Cluster) Redirects(ctx context.Context) map[string]int64 {
	out := map[string]int64{}
	for _, s := range c.Nodes {
		if s.cmd == nil {
			continue
		}
		cl := nodeClient(s)
		info, err := cl.Info(ctx, "errorstats").Result()
		cl.Close()
		if err != nil {
			continue
		}
		for _, line := range strings.Split(info, "\r\n") {
			name, rest, ok := strings.Cut(strings.TrimPrefix(line, "errorstat_"), ":count=")
			if !ok || !strings.HasPrefix(line, "errorstat_") {
				continue
			}
			switch name {
			case "ASK", "MOVED", "TRYAGAIN", "CLUSTERDOWN":
				n, _ := strconv.ParseInt(rest, 10, 64)
				out[name] += n
			}
		}
	}
	return out
}

// DumpSlot describes, for a failing test's log, every key of slot on every
// live master: its type and value (a list's first 100 elements), at most 100
// keys a node.
func (c *Cluster) DumpSlot(ctx context.Context, slot int) string {
	var b strings.Builder
	for _, s := range c.Masters(ctx) {
		cl := nodeClient(s)
		keys, err := cl.ClusterGetKeysInSlot(ctx, slot, 100).Result()
		fmt.Fprintf(&b, "%s: %d keys %v\n", s.Addr(), len(keys), err)
		for _, k := range keys {
			typ := cl.Type(ctx, k).Val()
			var v any
			switch typ {
			case "string":
				v = cl.Get(ctx, k).Val()
			case "list":
				v = cl.LRange(ctx, k, 0, 99).Val()
			}
			fmt.Fprintf(&b, "  %s %s %q\n", k, typ, v)
		}
		cl.Close()
	}
	return b.String()
}
