package conn

import (
	"bytes"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/clierr"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/redis/go-redis/v9"
)

func TestNewClient(t *testing.T) {
	tests := []struct {
		name    string
		cfg     Config
		check   func(t *testing.T, c redis.UniversalClient)
		wantErr bool
	}{
		{"tls", Config{URL: "rediss://redis.example.com:6380/2"}, func(t *testing.T, c redis.UniversalClient) {
			o := c.(*redis.Client).Options()
			if o.TLSConfig == nil || o.Addr != "redis.example.com:6380" || o.DB != 2 {
				t.Errorf("got addr %s db %d tls %v", o.Addr, o.DB, o.TLSConfig != nil)
			}
		}, false},
		{"unix", Config{URL: "unix:///run/redis.sock?db=3"}, func(t *testing.T, c redis.UniversalClient) {
			o := c.(*redis.Client).Options()
			if o.Network != "unix" || o.Addr != "/run/redis.sock" || o.DB != 3 {
				t.Errorf("got %s %s db %d", o.Network, o.Addr, o.DB)
			}
		}, false},
		{"password from env", Config{URL: "redis://127.0.0.1:6379", Password: "fromenv"}, func(t *testing.T, c redis.UniversalClient) {
			if o := c.(*redis.Client).Options(); o.Password != "fromenv" {
				t.Errorf("password %q", o.Password)
			}
		}, false},
		{"password in URL wins", Config{URL: "redis://u:inurl@127.0.0.1:6379", Password: "fromenv"}, func(t *testing.T, c redis.UniversalClient) {
			if o := c.(*redis.Client).Options(); o.Password != "inurl" || o.Username != "u" {
				t.Errorf("user %q password %q", o.Username, o.Password)
			}
		}, false},
		{"timeouts and no retries", Config{URL: "redis://127.0.0.1:6379"}, func(t *testing.T, c redis.UniversalClient) {
			o := c.(*redis.Client).Options()
			if o.DialTimeout != 2*time.Second || o.ReadTimeout != 2*time.Second || o.MaxRetries > 0 {
				t.Errorf("dial %v read %v retries %d", o.DialTimeout, o.ReadTimeout, o.MaxRetries)
			}
		}, false},
		{"cluster seeds", Config{URL: "redis://a:7000?addr=b:7001&addr=c:7002", Cluster: true}, func(t *testing.T, c redis.UniversalClient) {
			o := c.(*redis.ClusterClient).Options()
			if len(o.Addrs) != 3 || o.Addrs[2] != "c:7002" {
				t.Errorf("addrs %v", o.Addrs)
			}
		}, false},
		{"no pipeline pool", Config{URL: "redis://127.0.0.1:6379"}, func(t *testing.T, c redis.UniversalClient) {
			if o := c.(*redis.Client).Options(); o.PipelinePoolSize >= 0 {
				t.Errorf("PipelinePoolSize %d: pipelines would dial a connection of their own", o.PipelinePoolSize)
			}
		}, false},
		{"no pipeline pool in a cluster", Config{URL: "redis://a:7000", Cluster: true}, func(t *testing.T, c redis.UniversalClient) {
			if o := c.(*redis.ClusterClient).Options(); o.PipelinePoolSize >= 0 {
				t.Errorf("PipelinePoolSize %d", o.PipelinePoolSize)
			}
		}, false},
		{"no pipeline pool behind Sentinel", Config{URL: "redis://a:26379", SentinelMaster: "main"}, func(t *testing.T, c redis.UniversalClient) {
			if o := c.(*redis.Client).Options(); o.PipelinePoolSize >= 0 {
				t.Errorf("PipelinePoolSize %d", o.PipelinePoolSize)
			}
		}, false},
		{"bad scheme", Config{URL: "http://x"}, nil, true},
		{"unknown option", Config{URL: "redis://x?bogus=1"}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Timeout = 2 * time.Second
			c, err := NewClient(&tt.cfg, &iostreams.IOStreams{ErrOut: &bytes.Buffer{}}, 0)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				// cmdutil.ExitCode maps it to exit 2.
				if !clierr.IsUsage(err) {
					t.Errorf("bad URL: %v is not a usage error", err)
				}
				return
			}
			defer c.Close()
			tt.check(t, c)
		})
	}
}

func TestDescribeCmdHidesAuth(t *testing.T) {
	ctx := t.Context()
	for _, args := range [][]any{
		{"auth", "s3cret"},
		{"AUTH", "joe", "s3cret"},
		{"hello", "3", "AUTH", "joe", "s3cret", "SETNAME", "x"},
	} {
		got := describeCmd(redis.NewStatusCmd(ctx, args...))
		if bytes.Contains([]byte(got), []byte("s3cret")) {
			t.Errorf("%v rendered as %s", args, got)
		}
	}
}
