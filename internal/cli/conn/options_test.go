package conn

import (
	"context"
	"crypto/tls"
	"net"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// URLs with every query option go-redis reads for each kind of client.
const (
	everyOption = "rediss://ann:urlpw@db.example:6380/4" +
		"?protocol=2&client_name=chatq-ops&max_retries=5&min_retry_backoff=1ms&max_retry_backoff=9ms" +
		"&dial_timeout=5s&read_timeout=7s&write_timeout=0" +
		"&pool_fifo=true&pool_size=20&pool_timeout=4s&min_idle_conns=1&max_idle_conns=3&max_active_conns=30&max_concurrent_dials=2" +
		"&pipeline_pool_size=6&pipeline_read_buffer_size=4096&pipeline_write_buffer_size=8192" +
		"&conn_max_idle_time=30s&conn_max_lifetime=1h&conn_max_lifetime_jitter=1m&skip_verify=true"
	everyClusterOption = "rediss://ann:urlpw@a.example:7000" +
		"?addr=b.example:7001&addr=c.example:7002&protocol=3&client_name=chatq" +
		"&max_redirects=4&read_only=true&route_by_latency=true&route_by_latency_tolerance=5ms&route_randomly=true" +
		"&max_retries=2&min_retry_backoff=1ms&max_retry_backoff=9ms" +
		"&dial_timeout=5s&dialer_retries=4&dialer_retry_timeout=50ms&read_timeout=7s" +
		"&pool_fifo=true&pool_size=3&max_concurrent_dials=2&min_idle_conns=1&max_idle_conns=3&max_active_conns=30" +
		"&pipeline_pool_size=6&pipeline_read_buffer_size=4096&pipeline_write_buffer_size=8192" +
		"&pool_timeout=4s&conn_max_lifetime=1h&conn_max_lifetime_jitter=1m&conn_max_idle_time=30s&failing_timeout_seconds=9"
	everySentinelOption = "rediss://sam:urlpw@s1.example:26379/2" +
		"?addr=s2.example:26380&master_name=other&client_name=chatq&route_by_latency_tolerance=5ms" +
		"&replica_only=true&use_disconnected_replicas=true&protocol=2&username=qu&password=qp" +
		"&max_retries=2&min_retry_backoff=1ms&max_retry_backoff=9ms" +
		"&dial_timeout=5s&dialer_retries=4&dialer_retry_timeout=50ms&read_timeout=7s&write_timeout=8s&context_timeout_enabled=false" +
		"&pool_fifo=true&pool_size=3&max_concurrent_dials=2&min_idle_conns=1&max_idle_conns=3&max_active_conns=30" +
		"&pipeline_pool_size=6&pipeline_read_buffer_size=4096&pipeline_write_buffer_size=8192" +
		"&conn_max_lifetime=1h&conn_max_lifetime_jitter=1m&conn_max_idle_time=30s&pool_timeout=4s" +
		"&disableIdentity=false&identitySuffix=-ops&unstable_resp3=true&db=5&skip_verify=true"
)

// TestClientOptions pins, field by field, the options each kind of client
// gets from a configuration: what the URL says (every query option go-redis
// reads for that kind), chatq's own settings over it, and the differences
// between the kinds. The expected values were taken from the code that set
// each kind's options apart, before the three were built from one
// redis.UniversalOptions.
func TestClientOptions(t *testing.T) {
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: "sni.example"}
	set := func(context.Context, string, string) (net.Conn, error) { return nil, nil } // a dialer is set
	noMaint := &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	asked := Config{URL: everyClusterOption,
		Cluster: true, Password: "cfgpw", DB: 0, DBSet: true, Timeout: 3 * time.Second}
	asked.SetAskedPassword("asked")

	tests := []struct {
		name     string
		cfg      Config
		tc       *tls.Config
		poolSize int
		want     clientOptions
		wantErr  bool
	}{
		{name: "standalone", cfg: Config{URL: "redis://127.0.0.1:6390", Timeout: 2 * time.Second},
			want: clientOptions{simple: &redis.Options{
				Network: "tcp", Addr: "127.0.0.1:6390",
				DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
				Dialer: set, MaxRetries: -1, DialerRetries: 1, DisableIdentity: true, ContextTimeoutEnabled: true,
				PipelinePoolSize: -1, MaintNotificationsConfig: noMaint,
			}}},
		{name: "standalone with every URL option", tc: tc, poolSize: 8,
			cfg: Config{URL: everyOption,
				User: "ops", Password: "cfgpw", DB: 7, DBSet: true, Timeout: 3 * time.Second},
			want: clientOptions{simple: &redis.Options{
				Network: "tcp", Addr: "db.example:6380", Username: "ops", Password: "urlpw", DB: 7,
				Protocol: 2, ClientName: "chatq-ops", MaxRetries: -1, MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 9 * time.Millisecond,
				DialTimeout: 5 * time.Second, ReadTimeout: 7 * time.Second, WriteTimeout: -1,
				PoolFIFO: true, PoolSize: 20, PoolTimeout: 4 * time.Second, MinIdleConns: 1, MaxIdleConns: 3, MaxActiveConns: 30, MaxConcurrentDials: 2,
				PipelinePoolSize: -1, PipelineReadBufferSize: 4096, PipelineWriteBufferSize: 8192,
				ConnMaxIdleTime: 30 * time.Second, ConnMaxLifetime: time.Hour, ConnMaxLifetimeJitter: time.Minute,
				TLSConfig: tc, Dialer: set, DialerRetries: 1, DisableIdentity: true, ContextTimeoutEnabled: true,
				MaintNotificationsConfig: noMaint,
			}}},
		// A socket takes neither TLS nor chatq's dialer.
		{name: "unix socket", tc: tc, poolSize: 4,
			cfg: Config{URL: "unix:///run/redis.sock?db=3", TLS: true, Password: "cfgpw", Timeout: 2 * time.Second},
			want: clientOptions{simple: &redis.Options{
				Network: "unix", Addr: "/run/redis.sock", Password: "cfgpw", DB: 3,
				DialTimeout: 2 * time.Second, ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second,
				MaxRetries: -1, DialerRetries: 1, DisableIdentity: true, ContextTimeoutEnabled: true,
				PoolSize: 4, PipelinePoolSize: -1, MaintNotificationsConfig: noMaint,
			}}},
		{name: "cluster with every URL option", cfg: asked, tc: tc, poolSize: 10,
			want: clientOptions{cluster: &redis.ClusterOptions{
				Addrs:    []string{"a.example:7000", "b.example:7001", "c.example:7002"},
				Username: "ann", Password: "asked", Protocol: 3, ClientName: "chatq",
				MaxRedirects: 4, ReadOnly: true, RouteByLatency: true, RouteByLatencyTolerance: 5 * time.Millisecond, RouteRandomly: true,
				MaxRetries: -1, MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 9 * time.Millisecond,
				DialTimeout: 5 * time.Second, DialerRetries: 1, DialerRetryTimeout: 50 * time.Millisecond,
				ReadTimeout: 7 * time.Second, WriteTimeout: 3 * time.Second,
				PoolFIFO: true, PoolSize: 10, MaxConcurrentDials: 2, MinIdleConns: 1, MaxIdleConns: 3, MaxActiveConns: 30,
				PipelinePoolSize: -1, PipelineReadBufferSize: 4096, PipelineWriteBufferSize: 8192,
				PoolTimeout: 4 * time.Second, ConnMaxLifetime: time.Hour, ConnMaxLifetimeJitter: time.Minute, ConnMaxIdleTime: 30 * time.Second,
				FailingTimeoutSeconds: 9,
				TLSConfig:             tc, Dialer: set, DisableIdentity: true, ContextTimeoutEnabled: true,
				MaintNotificationsConfig: noMaint,
			}}},
		{name: "cluster", cfg: Config{URL: "redis://a:7000", Cluster: true, User: "ops", Password: "cfgpw"},
			want: clientOptions{cluster: &redis.ClusterOptions{
				Addrs: []string{"a:7000"}, Username: "ops", Password: "cfgpw",
				Dialer: set, MaxRetries: -1, DialerRetries: 1, DisableIdentity: true, ContextTimeoutEnabled: true,
				PipelinePoolSize: -1, MaintNotificationsConfig: noMaint,
			}}},
		// The URL's credentials are the master's; Sentinel's come apart.
		{name: "sentinel with every URL option", tc: tc, poolSize: 10,
			cfg: Config{URL: everySentinelOption,
				SentinelMaster: "main", SentinelUser: "sen", SentinelPassword: "senpw", Password: "cfgpw",
				DB: 6, DBSet: true, Timeout: 3 * time.Second},
			want: clientOptions{failover: &redis.FailoverOptions{
				MasterName: "main", SentinelAddrs: []string{"s1.example:26379", "s2.example:26380"},
				ClientName: "chatq", RouteByLatencyTolerance: 5 * time.Millisecond,
				ReplicaOnly: true, UseDisconnectedReplicas: true, Protocol: 2,
				Username: "sam", Password: "urlpw", SentinelUsername: "sen", SentinelPassword: "senpw", DB: 6,
				MaxRetries: -1, MinRetryBackoff: time.Millisecond, MaxRetryBackoff: 9 * time.Millisecond,
				DialTimeout: 5 * time.Second, DialerRetries: 1, DialerRetryTimeout: 50 * time.Millisecond,
				ReadTimeout: 7 * time.Second, WriteTimeout: 8 * time.Second, ContextTimeoutEnabled: true,
				PoolFIFO: true, PoolSize: 10, MaxConcurrentDials: 2, MinIdleConns: 1, MaxIdleConns: 3, MaxActiveConns: 30,
				PipelinePoolSize: -1, PipelineReadBufferSize: 4096, PipelineWriteBufferSize: 8192,
				ConnMaxLifetime: time.Hour, ConnMaxLifetimeJitter: time.Minute, ConnMaxIdleTime: 30 * time.Second, PoolTimeout: 4 * time.Second,
				DisableIdentity: true, IdentitySuffix: "-ops", UnstableResp3: true,
				TLSConfig: tc, Dialer: set,
			}}},
		{name: "sentinel", cfg: Config{URL: "redis://s1:26379", SentinelMaster: "main", User: "ops", Password: "cfgpw"},
			want: clientOptions{failover: &redis.FailoverOptions{
				MasterName: "main", SentinelAddrs: []string{"s1:26379"}, Username: "ops", Password: "cfgpw",
				Dialer: set, MaxRetries: -1, DialerRetries: 1, DisableIdentity: true, ContextTimeoutEnabled: true,
				PipelinePoolSize: -1,
			}}},
		{name: "cluster with a database", cfg: Config{URL: "redis://a:7000", Cluster: true, DB: 1, DBSet: true}, wantErr: true},
		{name: "unknown option", cfg: Config{URL: "redis://x?bogus=1"}, wantErr: true},
		{name: "unknown cluster option", cfg: Config{URL: "redis://x?db=1", Cluster: true}, wantErr: true},
		{name: "unknown sentinel option", cfg: Config{URL: "redis://x?read_only=1", SentinelMaster: "main"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := newClientOptions(&tt.cfg, tt.tc, new(atomic.Bool), tt.poolSize)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if (got.simple != nil) != (tt.want.simple != nil) || (got.cluster != nil) != (tt.want.cluster != nil) || (got.failover != nil) != (tt.want.failover != nil) {
				t.Fatalf("got kind %+v, want %+v", got, tt.want)
			}
			switch {
			case got.simple != nil:
				diffFields(t, got.simple, tt.want.simple)
			case got.cluster != nil:
				diffFields(t, got.cluster, tt.want.cluster)
			default:
				diffFields(t, got.failover, tt.want.failover)
			}
		})
	}
}

// diffFields reports each field in which the structs *got and *want differ.
// A func (the dialer) is compared by whether it is set; an unexported field
// by whether it is zero.
func diffFields(t *testing.T, got, want any) {
	t.Helper()
	g, w := reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem()
	for i := range g.NumField() {
		f := g.Type().Field(i)
		gf, wf := g.Field(i), w.Field(i)
		switch {
		case !f.IsExported():
			if gf.IsZero() != wf.IsZero() {
				t.Errorf("%s: set %v, want %v", f.Name, !gf.IsZero(), !wf.IsZero())
			}
		case f.Type.Kind() == reflect.Func:
			if gf.IsNil() != wf.IsNil() {
				t.Errorf("%s: set %v, want %v", f.Name, !gf.IsNil(), !wf.IsNil())
			}
		case !reflect.DeepEqual(gf.Interface(), wf.Interface()):
			t.Errorf("%s = %+v, want %+v", f.Name, gf.Interface(), wf.Interface())
		}
	}
}

// TestURLOptionsThroughUniversal checks that what go-redis's parser reads
// from a URL for each kind of client comes back whole from one
// UniversalOptions.
func TestURLOptionsThroughUniversal(t *testing.T) {
	for _, cfg := range []Config{
		{URL: everyOption},
		{URL: "unix:///run/redis.sock?db=3"},
		{URL: everyClusterOption, Cluster: true},
		{URL: everySentinelOption, SentinelMaster: "main"},
	} {
		parsed, err := parseURL(&cfg)
		if err != nil {
			t.Fatal(err)
		}
		got := parsed.sameKind(parsed.universal())
		switch {
		case parsed.simple != nil:
			diffFields(t, got.simple, parsed.simple)
		case parsed.cluster != nil:
			diffFields(t, got.cluster, parsed.cluster)
		default:
			diffFields(t, got.failover, parsed.failover)
		}
	}
}
