package cmd

import (
	"context"
	"fmt"
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
	return &cobra.Command{
		Use:   "ping",
		Short: "Check the connection: server version, mode and round-trip time",
		Example: `  chatq ping
  chatq --url rediss://:secret@redis.example.com:6380 ping -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return pingRun(cmd.Context(), opts) },
	}
}

type pingResult struct {
	URL     string  `json:"url"`
	Server  string  `json:"server"` // "redis", or what else answered: "miniredis" for chatq dev
	Version string  `json:"version"`
	Mode    string  `json:"mode"`
	RTTMs   float64 `json:"rtt_ms"`
}

func pingRun(ctx context.Context, opts *pingOptions) error {
	f := opts.f
	c, err := f.Client()
	if err != nil {
		return err
	}
	// INFO goes first and pays for the dial; the PING after it is timed
	// alone as the round trip.
	info, infoErr := c.Info(ctx, "server").Result()
	start := time.Now()
	if err := c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("ping %s: %w", f.Config().RedactedURL(), err)
	}
	rtt := time.Since(start)
	res := pingResult{URL: f.Config().RedactedURL(), Server: "redis", Version: "unknown", Mode: "standalone",
		RTTMs: float64(rtt.Microseconds()) / 1000}
	if f.Config().Cluster {
		res.Mode = "cluster"
	}
	// The embedded server answers INFO without a server section: keep the
	// defaults then.
	if infoErr == nil {
		fields := infoFields(info)
		if v := fields["redis_version"]; v != "" {
			res.Version = v
		}
		if m := fields["redis_mode"]; m != "" {
			res.Mode = m
		}
	}
	if res.Version == "unknown" {
		// Not Redis, or a Redis that hides INFO: HELLO says which server it is
		// (the embedded one answers "miniredis").
		if name, v := helloServer(ctx, c); name != "" {
			res.Server, res.Version = name, v
		}
	}
	if f.JSON() {
		return f.WriteJSON(res)
	}
	what := res.Server + " " + res.Version
	if res.Server == "miniredis" {
		what = "miniredis (an embedded in-memory server, as chatq dev runs; not Redis)"
	}
	fmt.Fprintf(f.IO.Out, "PONG from %s: %s, %s, rtt %.3f ms\n", res.URL, what, res.Mode, res.RTTMs)
	return nil
}

// helloServer returns the "server" and "version" fields of HELLO's reply,
// or "" when the server does not answer it.
func helloServer(ctx context.Context, c redis.UniversalClient) (name, version string) {
	// HELLO needs a protocol version (the embedded server insists): give
	// the connection's own, so nothing changes.
	proto := 3
	switch cc := c.(type) {
	case *redis.Client:
		if p := cc.Options().Protocol; p != 0 {
			proto = p
		}
	case *redis.ClusterClient:
		if p := cc.Options().Protocol; p != 0 {
			proto = p
		}
	}
	reply, err := c.Do(ctx, "HELLO", proto).Result()
	if err != nil {
		return "", ""
	}
	fields := map[string]string{}
	switch r := reply.(type) {
	case map[any]any: // RESP3
		for k, v := range r {
			fields[fmt.Sprint(k)] = fmt.Sprint(v)
		}
	case []any: // RESP2: key, value, key, value…
		for i := 0; i+1 < len(r); i += 2 {
			fields[fmt.Sprint(r[i])] = fmt.Sprint(r[i+1])
		}
	}
	if fields["server"] == "" {
		return "", ""
	}
	if fields["version"] == "" {
		fields["version"] = "unknown"
	}
	return fields["server"], fields["version"]
}

// infoFields parses the "key:value" lines of an INFO reply.
func infoFields(info string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(info, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			out[k] = v
		}
	}
	return out
}
