package cmd

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cmdutil"
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
  chatq --url rediss://redis.example.com:6380 --cacert ca.pem ping -o json`,
		Args: cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return pingRun(cmd.Context(), opts) },
	}
}

type pingResult struct {
	URL     string  `json:"url"`
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
	res := pingResult{URL: f.Config().RedactedURL(), Version: "unknown", Mode: "standalone",
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
	if f.JSON() {
		return f.WriteJSON(res)
	}
	fmt.Fprintf(f.IO.Out, "PONG from %s: redis %s, %s, rtt %.3f ms\n", res.URL, res.Version, res.Mode, res.RTTMs)
	return nil
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
