// Package conn is chatq's connection to its server: the configuration
// (flags, CHATQ_* variables, the config file; loading, validation and its
// redacted description), the go-redis client it describes with TLS and the
// hooks chatq adds (--verbose, first-reply tracking, ACL refusals), the
// connection's error types and their hints, and the retry loop of
// long-running commands. It imports no cobra and defines no command.
package conn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"reflect"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// Probe checks, after an outage, that the server answers again and that
// no pooled connection the outage broke is left to carry the next request
// (which may write, and would end as "may have applied"): it PINGs on every
// idle connection of the client's pool at once (each master's pool on a
// Cluster), so that each broken one fails and is discarded, until a round
// of PINGs all succeed. go-redis also checks a plain TCP connection's
// socket before handing it out (see socketConn); a TLS connection it does
// not, so this is what clears those.
func Probe(ctx context.Context, client redis.UniversalClient) error {
	switch c := client.(type) {
	case *redis.Client:
		return probePool(ctx, c)
	case *redis.ClusterClient:
		return c.ForEachMaster(ctx, probePool)
	}
	return nil
}

// probePool PINGs on every idle connection of c, and one more, holding each
// until all have answered so that no connection is used twice; it repeats
// while some were broken.
func probePool(ctx context.Context, c *redis.Client) error {
	var err error
	for range 8 { // more than a pool's worth of broken connections
		n := int(c.PoolStats().IdleConns) + 1
		held := make([]*redis.Conn, 0, n)
		broken := false
		err = nil
		for range n {
			cn := c.Conn()
			held = append(held, cn)
			if perr := cn.Ping(ctx).Err(); perr != nil {
				if !brokenConn(perr) {
					err = perr
					break
				}
				broken = true
				err = perr
			}
		}
		for _, cn := range held {
			_ = cn.Close()
		}
		if !broken || !brokenConn(err) {
			return err
		}
	}
	return err
}

// brokenConn reports whether err comes from a connection the server closed
// (as opposed to one that could not be made).
func brokenConn(err error) bool {
	err = cause(err)
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		strings.Contains(err.Error(), "bad state")
}

// Refresh makes a Cluster client load the slot map again: after a failover
// the old master no longer answers, and go-redis would keep dialling it
// until its next periodic reload.
func Refresh(ctx context.Context, client redis.UniversalClient) {
	if cc, ok := client.(*redis.ClusterClient); ok {
		cc.ReloadState(ctx) // in the background; the next try uses it
	}
}

// NewClient builds the go-redis client the configuration describes:
// standalone (redis://, rediss:// for TLS, unix://), a cluster seed, or the
// master named --sentinel-master, found through the Sentinels in the URL.
// Every kind takes the same TLS settings and credentials.
func NewClient(cfg *Config, io *iostreams.IOStreams, poolSize int) (redis.UniversalClient, error) {
	tc, err := cfg.tlsConfig(io)
	if err != nil {
		return nil, err
	}
	replied := new(atomic.Bool)
	opts, err := newClientOptions(cfg, tc, replied, poolSize)
	if err != nil {
		return nil, err
	}
	// Not redis.NewUniversalClient: it picks the kind from the options (a
	// Cluster for two seeds or more, another Sentinel client for
	// ?route_randomly=); chatq's flags pick it.
	var c redis.UniversalClient
	switch {
	case opts.cluster != nil:
		cc := redis.NewClusterClient(opts.cluster)
		cc.OnNewNode(func(node *redis.Client) { node.AddHook(lostReplyHook{}) })
		c = cc
	case opts.failover != nil:
		c = redis.NewFailoverClient(opts.failover)
	default:
		c = redis.NewClient(opts.simple)
	}
	// First, so outermost: each retry goes through the hooks below it
	// (--verbose logs every try).
	budget := cfg.Timeout
	if budget <= 0 {
		budget = 3 * time.Second // go-redis's read timeout
	}
	c.AddHook(retryHook{retryable: retryable{cluster: cfg.Cluster, failover: cfg.SentinelMaster != ""}, budget: budget, top: c.Process})
	c.AddHook(permHook{})
	c.AddHook(initHook{replied})
	if cfg.Verbose {
		io.Infof("connecting to %s", cfg.Server())
		c.AddHook(verboseHook{io})
	}
	return c, nil
}

// clientOptions are the options of the one client NewClient builds: exactly
// one of them is set.
type clientOptions struct {
	simple   *redis.Options         // redis://, rediss://, unix://
	cluster  *redis.ClusterOptions  // --cluster
	failover *redis.FailoverOptions // --sentinel-master
}

// newClientOptions parses the URL for the kind of client cfg describes and
// adds chatq's settings to what it says: tc for TLS (nil without), replied
// for the dialer to mark the server's first reply, and a pool of at least
// poolSize connections. The settings go once into one
// redis.UniversalOptions, from which go-redis's own conversions make the
// kind's options.
func newClientOptions(cfg *Config, tc *tls.Config, replied *atomic.Bool, poolSize int) (clientOptions, error) {
	parsed, err := parseURL(cfg)
	if err != nil {
		return clientOptions{}, err
	}
	o := parsed.universal()

	user, pass := o.Username, o.Password
	if parsed.failover != nil {
		// go-redis reads the URL's credentials as Sentinel's; in chatq the
		// URL's are the master's, as in every other mode, and Sentinel's
		// own come from sentinel-user and sentinel-password.
		user, pass = o.SentinelUsername, o.SentinelPassword
	}
	o.Username, o.Password = cfg.credentials(user, pass)
	// Only Failover() reads these.
	o.MasterName = cfg.SentinelMaster
	o.SentinelUsername, o.SentinelPassword = cfg.SentinelUser, cfg.SentinelPassword
	if cfg.DBSet {
		o.DB = cfg.DB // Cluster() drops it: a cluster has only database 0, which parseURL checked
	}
	// TLS is for TCP connections; a Unix socket also keeps go-redis's own
	// dialer.
	unix := parsed.simple != nil && parsed.simple.Network == "unix"
	if !unix {
		o.TLSConfig = tc
	}
	applyTimeouts(&o.DialTimeout, &o.ReadTimeout, &o.WriteTimeout, cfg.Timeout)
	if !unix {
		o.Dialer = dialer(tc, o.DialTimeout, replied)
	}
	// A retried write could apply twice; an operator would rather see the
	// error than wait through redials. The client-identity round trip buys
	// nothing here.
	o.MaxRetries = -1
	o.DialerRetries = 1
	o.DisableIdentity = true
	o.ContextTimeoutEnabled = true
	o.PoolSize = max(o.PoolSize, poolSize)
	o.PipelinePoolSize = noPipelinePool
	// Failover() drops it: FailoverOptions has no such field, and go-redis
	// turns the notifications off behind Sentinel itself.
	o.MaintNotificationsConfig = noMaintNotifications()
	return parsed.sameKind(o), nil
}

// parseURL reads the URL with go-redis's parser for the kind of client cfg
// describes: each kind takes query options of its own (?addr= seeds for a
// cluster and for Sentinels, ?read_only= for a cluster, ...).
func parseURL(cfg *Config) (clientOptions, error) {
	raw := normalizeURL(cfg.URL)
	var parsed clientOptions
	var err error
	switch {
	case cfg.Cluster:
		parsed.cluster, err = redis.ParseClusterURL(raw)
		if err == nil && cfg.DBSet && cfg.DB != 0 {
			return clientOptions{}, withHint(usageErrorf("--db %d: a Redis Cluster has only database 0", cfg.DB), "drop --db (CHATQ_DB), or use --prefix to keep apart what shares a cluster")
		}
	case cfg.SentinelMaster != "":
		parsed.failover, err = redis.ParseFailoverURL(raw)
	default:
		parsed.simple, err = redis.ParseURL(raw)
	}
	if err != nil {
		return clientOptions{}, badURL(err, cfg.URL)
	}
	return parsed, nil
}

// universal moves the options of c's kind into one UniversalOptions: every
// field UniversalOptions has by the same name and type, and the addresses
// and the Sentinel client's ReplicaOnly, which it holds under other names.
// What it has no field for (a socket's Network, UseDisconnectedReplicas)
// sameKind takes from c.
func (c clientOptions) universal() *redis.UniversalOptions {
	o := new(redis.UniversalOptions)
	switch {
	case c.cluster != nil:
		copyFields(o, c.cluster)
	case c.failover != nil:
		copyFields(o, c.failover)
		o.Addrs = c.failover.SentinelAddrs
		o.ReadOnly = c.failover.ReplicaOnly
	default:
		copyFields(o, c.simple)
		o.Addrs = []string{c.simple.Addr}
	}
	return o
}

// sameKind makes options of c's kind from o, with go-redis's conversions,
// and adds what UniversalOptions has no field for. Each conversion keeps
// only what its kind takes: the database is a standalone or Sentinel
// client's, MaxRedirects and FailingTimeoutSeconds a cluster's, the master's
// name and Sentinel's credentials a Sentinel client's; ReadOnly is a
// cluster's read from replicas and a Sentinel client's ReplicaOnly.
func (c clientOptions) sameKind(o *redis.UniversalOptions) clientOptions {
	switch {
	case c.cluster != nil:
		return clientOptions{cluster: o.Cluster()}
	case c.failover != nil:
		f := o.Failover()
		f.UseDisconnectedReplicas = c.failover.UseDisconnectedReplicas
		return clientOptions{failover: f}
	default:
		s := o.Simple()
		s.Network = c.simple.Network
		return clientOptions{simple: s}
	}
}

// copyFields sets each exported field of the struct *dst that the struct
// *src has by the same name and type to its value there. It indexes dst's
// fields by name once: FieldByName for each of the fifty-odd options
// scanned them all each time, about 4% of the instructions of a `chatq
// ping`.
func copyFields(dst, src any) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	dt, st := d.Type(), s.Type()
	byName := make(map[string]int, dt.NumField())
	for i := range dt.NumField() {
		byName[dt.Field(i).Name] = i
	}
	for i := range st.NumField() {
		f := st.Field(i)
		if !f.IsExported() {
			continue
		}
		if j, ok := byName[f.Name]; ok && dt.Field(j).Type == f.Type {
			d.Field(j).Set(s.Field(i))
		}
	}
}

// credentials picks the user and password for the data server from those in
// the URL and those given apart: --user beats the URL's user; the password
// asked by --askpass beats the URL's, which beats CHATQ_PASSWORD,
// REDISCLI_AUTH and the config file (these apply to every server, the URL
// to this one).
func (c *Config) credentials(urlUser, urlPass string) (user, pass string) {
	user = urlUser
	if c.User != "" {
		user = c.User
	}
	switch {
	case c.askedPassword:
		pass = c.Password
	case urlPass != "":
		pass = urlPass
	default:
		pass = c.Password
	}
	return user, pass
}

// SetAskedPassword records the password read by --askpass; it wins over
// every other source.
func (c *Config) SetAskedPassword(pw string) {
	c.Password = pw
	c.askedPassword = true
}

// NeedsPassword reports whether --askpass is given and the password not
// yet asked.
func (c *Config) NeedsPassword() bool { return c.AskPass && !c.askedPassword }

// Server names the server for messages: the URL with any password
// hidden, and the master's name behind Sentinel.
func (c *Config) Server() string {
	if c.SentinelMaster != "" {
		return fmt.Sprintf("master %q via Sentinel %s", c.SentinelMaster, c.RedactedURL())
	}
	return c.RedactedURL()
}

// noPipelinePool makes pipelines run on the client's one pool: by default
// go-redis (9.23) keeps a second pool for pipelines, so a command's first
// pipeline dials a second connection (with its HELLO and two 128 KiB
// buffers) beside the one its single commands use. A negative
// PipelinePoolSize opts out.
const noPipelinePool = -1

// noMaintNotifications turns off go-redis's maintenance notifications: they
// cost a CLIENT MAINT_NOTIFICATIONS round trip on every new connection, and a
// short-lived CLI has no use for them.
func noMaintNotifications() *maintnotifications.Config {
	return &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
}

func applyTimeouts(dial, read, write *time.Duration, d time.Duration) {
	for _, p := range []*time.Duration{dial, read, write} {
		if *p == 0 {
			*p = d
		}
	}
}

// badURL turns a URL parsing error into a usage error that does not repeat
// the URL, nor any part of what may be its password.
func badURL(err error, raw string) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := scrubSecrets(strings.TrimPrefix(err.Error(), "redis: "), raw)
	if strings.Contains(msg, "unexpected option: addr") {
		return withHint(usageErrorf("invalid --url: %s", msg), "?addr=host:port lists more seeds for --cluster or more Sentinels for --sentinel-master; a single server takes none")
	}
	return withHint(usageErrorf("invalid --url: %s", msg),
		"use redis://[user@]host:port/db (password from CHATQ_PASSWORD or --askpass), rediss:// for TLS, or unix:///path/to/socket")
}

// scrubSecrets removes from msg whatever in raw may be a password: the text
// between "://" and the last '@', and the part of it after the first ':'.
func scrubSecrets(msg, raw string) string {
	i := strings.Index(raw, "://")
	if i < 0 {
		return msg
	}
	rest := raw[i+3:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return msg
	}
	info := rest[:at]
	_, pass, _ := strings.Cut(info, ":")
	for _, s := range []string{info, pass} {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "xxxxx")
		}
	}
	return msg
}

// verboseHook logs each command sent to Redis on stderr, with passwords
// hidden.
type verboseHook struct{ io *iostreams.IOStreams }

func (h verboseHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		start := time.Now()
		conn, err := next(ctx, network, addr)
		h.io.Infof("dial %s %s (%s)", network, addr, since(start))
		return conn, err
	}
}

func (h verboseHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		h.io.Infof("redis: %s (%s)", describeCmd(cmd), since(start))
		return err
	}
}

func (h verboseHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		h.io.Infof("redis: pipeline of %d (%s)", len(cmds), since(start))
		for _, c := range cmds {
			h.io.Infof("redis:   %s", describeCmd(c))
		}
		return err
	}
}

func since(t time.Time) string { return time.Since(t).Round(time.Microsecond).String() }

// describeCmd renders a command for --verbose: arguments shortened, and
// everything after AUTH hidden.
func describeCmd(cmd redis.Cmder) string {
	var b strings.Builder
	for i, a := range cmd.Args() {
		if i > 0 {
			b.WriteByte(' ')
		}
		s := fmt.Sprint(a)
		if strings.EqualFold(s, "auth") {
			b.WriteString(s + " ***")
			break
		}
		if len(s) > 64 {
			s = s[:61] + "..."
		}
		b.WriteString(fmt.Sprintf("%q", s))
	}
	if err := cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
		b.WriteString(" -> error: " + err.Error())
	}
	return b.String()
}

// QuietLogger drops go-redis's internal log lines: every failure they report
// also comes back as an error, which Main prints once.
type QuietLogger struct{}

func (QuietLogger) Printf(context.Context, string, ...any) {}
