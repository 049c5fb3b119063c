package cmd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

type pingOptions struct {
	cmdutil.Output
	Client func() (redis.UniversalClient, error) // built when the run calls it

	// The connection ping checks, as configured.
	Server         string // names the server in errors (conn.Config.Server)
	URL            string // --url, its password hidden
	Timeout        time.Duration
	Cluster        bool
	SentinelMaster string
}

// newCmdPing returns `chatq ping` (runF: see cmdutil.RunWith).
func newCmdPing(f *cmdutil.Factory, runF func(context.Context, *pingOptions) error) *cobra.Command {
	opts := &pingOptions{}
	return cmdutil.MarkRead(&cobra.Command{
		Use:   "ping",
		Short: "Check the connection: server version, mode and round-trip time",
		Long: `Check the connection: the server's version, its mode (standalone, cluster,
sentinel or replica) and the round-trip time of one PING. The whole check,
dial and TLS handshake included, takes at most --timeout.

Mode is "sentinel" when chatq reached the master through Sentinel
(--sentinel-master), and "replica" when --url is a replica, which refuses
writes. When the mode does not match the flags (a Cluster node without
--cluster, a Sentinel without --sentinel-master), ping fails with a hint.`,
		Example: `  chatq ping
  chatq --url rediss://redis.example.com:6380 --cacert ca.pem ping -o json
  chatq --url 'redis://s1:26379?addr=s2:26379' --sentinel-master main ping`,
		Args: cmdutil.NoArgs,
		RunE: cmdutil.RunWith(f, opts, runF, pingRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			cfg := f.Config()
			opts.Client, opts.Server, opts.URL, opts.Timeout = f.Client, cfg.Server(), cfg.RedactedURL(), cfg.Timeout
			opts.Cluster, opts.SentinelMaster = cfg.Cluster, cfg.SentinelMaster
			return nil, nil
		}),
	})
}

type pingResult struct {
	URL     string  `json:"url"`
	Server  string  `json:"server"` // "redis", "valkey", or what else answered: "miniredis" for chatq dev
	Version string  `json:"version"`
	Mode    string  `json:"mode"`
	Master  string  `json:"master,omitempty"`
	RTTMs   float64 `json:"rtt_ms"`
}

func pingRun(ctx context.Context, opts *pingOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	// One deadline for the whole check: a silent server costs --timeout
	// once, not once per round trip.
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	fail := func(err error) error { return fmt.Errorf("ping %s: %w", opts.Server, err) }

	// HELLO goes first and pays for the dial; it names the server's
	// version, mode and role without INFO, which a least-privilege ACL
	// user need not have. The PING after it is timed alone.
	hello, err := c.Do(ctx, "hello", "3").Result()
	// A server or proxy that speaks only RESP2 has no HELLO (go-redis
	// falls back for every other command): its INFO names it.
	noHello := conn.UnknownCommand(err)
	if err != nil && !noHello {
		return fail(err)
	}
	start := time.Now()
	if err := c.Ping(ctx).Err(); err != nil {
		return fail(err)
	}
	rtt := time.Since(start)
	fields := conn.HelloFields(hello)
	if noHello {
		fields = infoAsHello(ctx, c)
	}
	res := pingResult{URL: opts.URL, Server: "redis", Version: "unknown", Mode: "standalone",
		RTTMs: float64(rtt.Microseconds()) / 1000}
	if v := fields["version"]; v != "" {
		res.Version = v
	}
	server := fields["mode"]
	switch {
	case server == "sentinel":
		// Only reachable without --sentinel-master: with it, HELLO goes
		// to the master.
		return cmdutil.WithHint(fail(errors.New("--url is a Sentinel, not a Redis server")), sentinelHint(ctx, c))
	case server == "cluster" && !opts.Cluster:
		return cmdutil.WithHint(fail(errors.New("--url is a Redis Cluster node, and --cluster is not set")),
			"add --cluster (CHATQ_CLUSTER=true), with ?addr=host:port for more seeds")
	case opts.Cluster:
		res.Mode = "cluster"
	case opts.SentinelMaster != "":
		res.Mode = "sentinel"
		res.Master = opts.SentinelMaster
	case fields["role"] == "replica" || fields["role"] == "slave":
		res.Mode = "replica"
	}
	if name := fields["server"]; name != "" {
		res.Server = name // "valkey" on Valkey 8, "miniredis" on chatq dev
	}
	if res.Server == "redis" && strings.HasPrefix(res.Version, "7.2.") {
		res.Server, res.Version = valkeyOrRedis(ctx, c, res.Version)
	}
	if opts.JSON {
		if err := opts.IO.WriteJSON(res); err != nil {
			return err
		}
	} else {
		via := ""
		if res.Master != "" {
			via = fmt.Sprintf(" (master %q)", res.Master)
		}
		what := res.Server + " " + res.Version
		if res.Server == "miniredis" {
			what = "miniredis (an embedded in-memory server, as chatq dev runs; not Redis)"
		}
		fmt.Fprintf(opts.IO.Out, "PONG from %s%s: %s, %s, rtt %.3f ms\n", res.URL, via, what, res.Mode, res.RTTMs)
	}
	if res.Mode == "replica" {
		opts.IO.Infof("hint: --url is a read-only replica: reads work, writes fail with READONLY; point --url at the master, or use --sentinel-master NAME")
	}
	return nil
}

// infoAsHello reads from INFO what HELLO would have said (server, version,
// mode); nothing when this user may not run INFO.
func infoAsHello(ctx context.Context, c redis.UniversalClient) map[string]string {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return nil
	}
	f := conn.InfoFields(info)
	name, version := conn.ServerIdentity(f)
	return map[string]string{"server": name, "version": version, "mode": f["redis_mode"]}
}

// valkeyOrRedis tells Valkey 7.2 from Redis 7.2: Valkey 7.2 (and Valkey 8
// with extended-redis-compatibility) says "redis" in HELLO, with a 7.2
// version, and only its INFO names it. A user who may not run INFO gets
// HELLO's answer.
func valkeyOrRedis(ctx context.Context, c redis.UniversalClient, version string) (string, string) {
	if f := infoAsHello(ctx, c); f["server"] != "" {
		return f["server"], f["version"]
	}
	return "redis", version
}

// sentinelHint names the masters a Sentinel monitors, for --sentinel-master.
func sentinelHint(ctx context.Context, c redis.UniversalClient) string {
	const base = "add --sentinel-master NAME (CHATQ_SENTINEL_MASTER) to reach the master NAME through it"
	reply, err := c.Do(ctx, "sentinel", "masters").Result()
	if err != nil {
		return base
	}
	var names []string
	if list, ok := reply.([]any); ok {
		for _, m := range list {
			if n := conn.HelloFields(m)["name"]; n != "" {
				names = append(names, n)
			}
		}
	}
	if len(names) == 0 {
		return base + "; it monitors no master yet"
	}
	sort.Strings(names)
	return base + "; it monitors " + strings.Join(names, ", ")
}
