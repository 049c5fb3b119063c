package cmd

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

type pingOptions struct {
	f *cmdutil.Factory
}

func newPingCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &pingOptions{f: f}
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
		RunE: func(cmd *cobra.Command, args []string) error { return pingRun(cmd.Context(), opts) },
	})
}

type pingResult struct {
	URL     string  `json:"url"`
	Server  string  `json:"server"` // "redis", or what else answered: "miniredis" for chatq dev
	Version string  `json:"version"`
	Mode    string  `json:"mode"`
	Master  string  `json:"master,omitempty"`
	RTTMs   float64 `json:"rtt_ms"`
}

func pingRun(ctx context.Context, opts *pingOptions) error {
	f := opts.f
	cfg := f.Config()
	c, err := f.Client()
	if err != nil {
		return err
	}
	// One deadline for the whole check: a silent server costs --timeout
	// once, not once per round trip.
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	fail := func(err error) error { return fmt.Errorf("ping %s: %w", cfg.Server(), err) }

	// HELLO goes first and pays for the dial; it names the server's
	// version, mode and role without INFO, which a least-privilege ACL
	// user need not have. The PING after it is timed alone.
	hello, err := c.Do(ctx, "hello", "3").Result()
	if err != nil {
		return fail(err)
	}
	start := time.Now()
	if err := c.Ping(ctx).Err(); err != nil {
		return fail(err)
	}
	rtt := time.Since(start)
	fields := helloFields(hello)
	res := pingResult{URL: cfg.RedactedURL(), Server: "redis", Version: "unknown", Mode: "standalone",
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
	case server == "cluster" && !cfg.Cluster:
		return cmdutil.WithHint(fail(errors.New("--url is a Redis Cluster node, and --cluster is not set")),
			"add --cluster (CHATQ_CLUSTER=true), with ?addr=host:port for more seeds")
	case cfg.Cluster:
		res.Mode = "cluster"
	case cfg.SentinelMaster != "":
		res.Mode = "sentinel"
		res.Master = cfg.SentinelMaster
	case fields["role"] == "replica" || fields["role"] == "slave":
		res.Mode = "replica"
	}
	if name := fields["server"]; name != "" {
		res.Server = name // "miniredis" on chatq dev
	}
	if f.JSON() {
		if err := f.IO.WriteJSON(res); err != nil {
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
		fmt.Fprintf(f.IO.Out, "PONG from %s%s: %s, %s, rtt %.3f ms\n", res.URL, via, what, res.Mode, res.RTTMs)
	}
	if res.Mode == "replica" {
		f.IO.Infof("hint: --url is a read-only replica: reads work, writes fail with READONLY; point --url at the master, or use --sentinel-master NAME")
	}
	return nil
}

// helloFields flattens HELLO's reply (a map in RESP3, a flat array in
// RESP2) to its string fields.
func helloFields(reply any) map[string]string {
	out := map[string]string{}
	switch r := reply.(type) {
	case map[any]any:
		for k, v := range r {
			out[fmt.Sprint(k)] = fmt.Sprint(v)
		}
	case []any:
		for i := 0; i+1 < len(r); i += 2 {
			out[fmt.Sprint(r[i])] = fmt.Sprint(r[i+1])
		}
	}
	return out
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
			if n := helloFields(m)["name"]; n != "" {
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
