// Package cmdutil is what every chatq command shares and no command is: the
// Factory with its configuration and lazy Redis client, IO streams, typed
// errors with hints and exit codes, JSON and table output, argument
// validators and shell completion helpers. It defines no cobra command.
package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
	"github.com/spf13/pflag"
)

// Factory hands commands what they share: the streams, the configuration
// (loaded once the flags are parsed) and a Redis client built on first use,
// so a command that needs no server never dials one.
type Factory struct {
	IO      *IOStreams
	Getenv  func(string) string
	cfg     *Config
	flags   *pflag.FlagSet
	client  redis.UniversalClient
	closers []func()
	// minPoolSize, when set before the client is built, sizes its
	// connection pool for that many concurrent users (bench).
	minPoolSize int
}

// Config returns the loaded configuration. It is set before any command runs.
func (f *Factory) Config() *Config { return f.cfg }

// Load sets the configuration and the global flags it was read from, once
// they are parsed.
func (f *Factory) Load(cfg *Config, flags *pflag.FlagSet) {
	f.cfg = cfg
	f.flags = flags
}

// Flags returns the global flags the configuration was read from.
func (f *Factory) Flags() *pflag.FlagSet { return f.flags }

// SetMinPoolSize sizes the client's connection pool, before it is built,
// for that many concurrent users (bench).
func (f *Factory) SetMinPoolSize(n int) { f.minPoolSize = n }

// JSON reports whether -o json was asked for.
func (f *Factory) JSON() bool { return f.cfg != nil && f.cfg.Output == "json" }

// Prefix is the string put in front of every key.
func (f *Factory) Prefix() string { return f.cfg.Prefix }

// Client returns the Redis client for the configured server, building it on
// first use. Main closes it.
func (f *Factory) Client() (redis.UniversalClient, error) {
	if f.client != nil {
		return f.client, nil
	}
	c, err := NewClient(f.cfg, f.IO, f.minPoolSize)
	if err != nil {
		return nil, err
	}
	f.client = c
	return c, nil
}

// Persistent returns the retry loop for a long-running command on this
// factory's server (see Persistent), giving up after giveUpAfter (0: never).
func (f *Factory) Persistent(giveUpAfter time.Duration) *Persistent {
	return &Persistent{IO: f.IO, GiveUpAfter: giveUpAfter, Refresh: f.refresh}
}

// refresh makes a Cluster client load the slot map again: after a failover
// the old master no longer answers, and go-redis would keep dialling it
// until its next periodic reload.
func (f *Factory) refresh(ctx context.Context) {
	if cc, ok := f.client.(*redis.ClusterClient); ok {
		cc.ReloadState(ctx) // in the background; the next try uses it
	}
}

// OnClose registers fn to run when the command ends.
func (f *Factory) OnClose(fn func()) { f.closers = append(f.closers, fn) }

// Close closes the client, if one was built, and runs the OnClose functions.
func (f *Factory) Close() {
	if f.client != nil {
		_ = f.client.Close()
	}
	for i := len(f.closers) - 1; i >= 0; i-- {
		f.closers[i]()
	}
}

// NewClient builds the go-redis client the configuration describes:
// standalone (redis://, rediss:// for TLS, unix://) or a cluster seed.
func NewClient(cfg *Config, io *IOStreams, poolSize int) (redis.UniversalClient, error) {
	var c redis.UniversalClient
	if cfg.Cluster {
		opt, err := redis.ParseClusterURL(cfg.URL)
		if err != nil {
			return nil, badURL(err)
		}
		if opt.Password == "" {
			opt.Password = cfg.Password
		}
		applyTimeouts(&opt.DialTimeout, &opt.ReadTimeout, &opt.WriteTimeout, cfg.Timeout)
		opt.MaxRetries = -1
		opt.DialerRetries = 1
		opt.DisableIdentity = true
		opt.ContextTimeoutEnabled = true
		opt.PoolSize = max(opt.PoolSize, poolSize)
		opt.MaintNotificationsConfig = noMaintNotifications()
		c = redis.NewClusterClient(opt)
	} else {
		opt, err := redis.ParseURL(cfg.URL)
		if err != nil {
			return nil, badURL(err)
		}
		if opt.Password == "" {
			opt.Password = cfg.Password
		}
		applyTimeouts(&opt.DialTimeout, &opt.ReadTimeout, &opt.WriteTimeout, cfg.Timeout)
		// A retried write could apply twice; an operator would rather see
		// the error than wait through redials. The client-identity round
		// trip buys nothing here.
		opt.MaxRetries = -1
		opt.DialerRetries = 1
		opt.DisableIdentity = true
		opt.ContextTimeoutEnabled = true
		opt.PoolSize = max(opt.PoolSize, poolSize)
		opt.MaintNotificationsConfig = noMaintNotifications()
		c = redis.NewClient(opt)
	}
	if cfg.Verbose {
		io.Infof("connecting to %s", cfg.RedactedURL())
		c.AddHook(verboseHook{io})
	}
	return c, nil
}

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
// the URL, which may hold a password.
func badURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	msg := strings.TrimPrefix(err.Error(), "redis: ")
	return WithHint(UsageErrorf("invalid --url: %s", msg),
		"use redis://[user:password@]host:port/db, rediss:// for TLS, or unix:///path/to/socket")
}

// verboseHook logs each command sent to Redis on stderr, with passwords
// hidden.
type verboseHook struct{ io *IOStreams }

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
