package redistest

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// Promote makes replica its master's master by a manual failover (CLUSTER
// FAILOVER: the master stops taking writes until the replica has them
// all, so nothing acknowledged is lost) and waits until it is one. A manual
// failover that does not complete (the replica still catching up after a
// resync, say) is asked for again every ten seconds, for a minute.
func (c *Cluster) Promote(ctx context.Context, replica *Server) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	cl := nodeClient(replica)
	defer cl.Close()
	var asked time.Time
	for {
		if time.Since(asked) > 10*time.Second {
			if err := cl.Do(ctx, "cluster", "failover").Err(); err == nil {
				asked = time.Now()
			}
		}
		role, err := cl.Do(ctx, "role").Slice()
		if err == nil && len(role) > 0 && role[0] == "master" {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s did not become a master: %v %v", replica.Addr(), role, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// KillClients closes every client connection of the node (CLIENT KILL of
// the normal and Pub/Sub clients), as an operator or a proxy's idle
// timeout does; replication links stay.
func (s *Server) KillClients(ctx context.Context) error {
	cl := nodeClient(s)
	defer cl.Close()
	for _, typ := range []string{"normal", "pubsub"} {
		if err := cl.Do(ctx, "client", "kill", "type", typ, "skipme", "yes").Err(); err != nil {
			return fmt.Errorf("CLIENT KILL TYPE %s on %s: %w", typ, s.Addr(), err)
		}
	}
	return nil
}

// Running reports whether the server's process is running (not killed).
func (s *Server) Running() bool { return s.cmd != nil }

// Freeze stops the server's process (SIGSTOP) for d, then lets it go on
// (SIGCONT): the node answers nothing meanwhile, as a server stalled by a
// slow disk or a busy host. On a Cluster, a master frozen for longer than
// the node timeout (1 s) is marked failing by the others, and every node
// answers CLUSTERDOWN until it is back.
func (s *Server) Freeze(d time.Duration) {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGSTOP)
	time.Sleep(d)
	_ = s.cmd.Process.Signal(syscall.SIGCONT)
}
