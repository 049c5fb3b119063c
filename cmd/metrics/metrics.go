// Package metrics holds `chatq metrics`: Prometheus metrics of the queues,
// sharded lists and chats under the prefix, printed once or served on
// /metrics.
package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/exporter"
	"github.com/chatq-dev/chatq/internal/cli/exposition"
	"github.com/chatq-dev/chatq/internal/cli/snapshot"
	"github.com/chatq-dev/chatq/internal/cli/webconfig"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

const metricsLong = `Prometheus metrics of the queues, sharded lists and chats under the
prefix (docs/metrics.md lists them): per queue, messages by state (ready,
delayed, inflight), the age of the oldest ready message, messages sent,
received and dead-lettered (counters) and the depth of its dead-letter
queue; per sharded list, items and shards; for the chats, the messages they
store (no series per chat or per user); and the scrape itself (chatq_up,
duration, server calls and round trips, whether a cap cut it short).

Without --listen, one snapshot in the Prometheus text format (OpenMetrics
with --openmetrics) on stdout, or with --file PATH in a file written
atomically (a temporary file renamed into place), as node_exporter's
textfile collector needs. When the server cannot be read, the snapshot says
chatq_up 0 and chatq exits 1.

With --listen ADDR, it serves /metrics for Prometheus to scrape, in the
format the scraper asks for (OpenMetrics or text), until stopped (Ctrl-C or
SIGTERM: exit 0). A port alone (9464, :9464) listens on 127.0.0.1 only; give
a host (0.0.0.0:9464) to listen elsewhere. Each scrape reads the server;
while the server is away (a restart, a failover) scrapes answer chatq_up 0,
and chatq says once on stderr that it lost the connection and once that it
is back.

--web-config FILE serves /metrics over TLS and/or behind basic auth, with
the web configuration file of Prometheus's exporters (exporter-toolkit's
--web.config.file), of which chatq reads these keys:
  tls_server_config:
    cert_file: server.crt     # PEM; relative paths are from FILE's directory
    key_file: server.key
    client_auth_type: RequireAndVerifyClientCert   # default NoClientCert
    client_ca_file: clients-ca.crt
    min_version: TLS12        # default; or TLS13
  basic_auth_users:
    prometheus: $2y$10$...    # a bcrypt hash: htpasswd -nBC 10 "" | tr -d ':\n'
Any other key, a password where its hash should be, or a certificate
without its key is a usage error (exit 2). The certificate is read again at
each connection, so a renewed one is served without a restart.

What one scrape costs the server, whatever the number of keys:
  1 INFO and 1 PING;
  at most --scan-calls SSCANs (COUNT 500) of the queue registry, and as
  many SCANs (COUNT 500) of the keyspace to find sharded lists, and as many
  to find chats: a big keyspace is discovered over several scrapes
  (chatq_discovery_complete says when it has been walked once);
  the stats script of each queue (O(log n)), 20 to a round trip, for at
  most --max-queues queues, and of the dead-letter queues they name;
  one O(1) script call per sharded list, at most --max-lists;
  one round trip for at most --max-chats chats, read in turn.
200 queues take 13 round trips (no lists or chats). --include and
--exclude (globs as in Redis's MATCH, repeatable) choose the queues, list
keys and chat ids read; --max-lists 0 or --max-chats 0 leaves those out.`

const metricsExample = `  chatq metrics
  chatq metrics --listen 9464                 # http://127.0.0.1:9464/metrics
  chatq metrics --listen 0.0.0.0:9464 --web-config web.yml   # TLS, basic auth
  chatq metrics --file /var/lib/node_exporter/textfile/chatq.prom   # from cron
  chatq metrics --include 'app-*' --exclude '*-test' --max-chats 0
  chatq metrics --jq '.[] | select(.name == "chatq_queue_messages") | .samples'`

type metricsOptions struct {
	cmdutil.Output
	Client func() (redis.UniversalClient, error) // built when the run calls it
	Hint   func(error) string                    // the hint for an error, on stderr

	Namespace   string
	Prefix      string
	Cluster     bool
	Listen      string
	WebConfig   string
	File        string
	OpenMetrics bool
	Limits      snapshot.Limits
	Include     []string
	Exclude     []string

	// Set by validate.
	filter *snapshot.Filter
	web    *webconfig.Config // from --web-config
}

// Defaults of the caps: a scrape reads at most this much.
const (
	defaultQueues    = 500
	defaultLists     = 100
	defaultChats     = 100
	defaultScanCalls = 10
	scanCount        = 500
)

// NewCmd returns `chatq metrics` (runF: see cmdutil.RunWith).
func NewCmd(f *cmdutil.Factory, runF func(context.Context, *metricsOptions) error) *cobra.Command {
	opts := &metricsOptions{}
	var scanCalls int
	cmd := &cobra.Command{
		Use:     "metrics [--listen ADDR | --file PATH]",
		Short:   "Prometheus metrics of queues, sharded lists and chats: once, or served on /metrics",
		Long:    metricsLong,
		Example: metricsExample,
		Args:    cmdutil.NoArgs,
		RunE: cmdutil.RunWith(f, opts, runF, metricsRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Client = f.Client
			opts.Hint = f.HintFor
			ns, err := conn.Namespace(opts.Namespace, f.Getenv)
			if err != nil {
				return nil, err
			}
			opts.Namespace = ns
			opts.Prefix, opts.Cluster = f.Prefix(), f.Config().Cluster
			opts.Limits.ScanCalls, opts.Limits.RegistryCalls, opts.Limits.ScanCount = scanCalls, scanCalls, scanCount
			return nil, opts.validate()
		}),
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Listen, "listen", "", "serve /metrics on ADDR (a port alone: on 127.0.0.1)")
	fl.StringVar(&opts.WebConfig, "web-config", "", "with --listen: serve over TLS and/or behind basic auth, as the exporters' web config FILE says")
	fl.StringVar(&opts.File, "file", "", "write the snapshot to PATH atomically instead of stdout")
	fl.BoolVar(&opts.OpenMetrics, "openmetrics", false, "write OpenMetrics instead of the Prometheus text format (stdout, --file)")
	fl.StringVar(&opts.Namespace, "namespace", "", "RSMQ namespace of the queues (env CHATQ_NAMESPACE, default rsmq)")
	fl.IntVar(&opts.Limits.Queues, "max-queues", defaultQueues, "read at most N queues per scrape")
	fl.IntVar(&opts.Limits.Lists, "max-lists", defaultLists, "read at most N sharded lists per scrape (0: none)")
	fl.IntVar(&opts.Limits.Chats, "max-chats", defaultChats, "read at most N chats per scrape, in turn (0: none)")
	fl.IntVar(&scanCalls, "scan-calls", defaultScanCalls, "discover with at most N SSCANs of the registry, and N SCANs each for lists and chats, per scrape")
	fl.StringArrayVar(&opts.Include, "include", nil, "read only the queues, lists and chats whose names match GLOB (repeatable)")
	fl.StringArrayVar(&opts.Exclude, "exclude", nil, "do not read those whose names match GLOB (repeatable)")
	cmd.MarkFlagsMutuallyExclusive("listen", "file")
	return cmdutil.MarkRead(cmd)
}

func (o *metricsOptions) validate() error {
	switch {
	case o.Limits.Queues < 1:
		return cmdutil.UsageErrorf("invalid --max-queues %d: at least 1", o.Limits.Queues)
	case o.Limits.Lists < 0 || o.Limits.Chats < 0:
		return cmdutil.UsageErrorf("invalid --max-lists or --max-chats: 0 or more")
	case o.Limits.ScanCalls < 1:
		return cmdutil.UsageErrorf("invalid --scan-calls %d: at least 1", o.Limits.ScanCalls)
	case o.Listen != "" && o.OpenMetrics:
		return cmdutil.WithHint(cmdutil.UsageErrorf("--openmetrics is for stdout and --file"),
			"with --listen, each scrape gets the format it asks for (Prometheus asks for OpenMetrics)")
	}
	f, err := snapshot.NewFilter(o.Include, o.Exclude)
	if err != nil {
		return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --include or --exclude: %v", err),
			`globs as in Redis's MATCH: * any characters, ? one, [a-z] one of a set, \ before a character to take it as it is`)
	}
	o.filter = f
	if o.Listen != "" {
		addr, err := listenAddr(o.Listen)
		if err != nil {
			return cmdutil.WithHint(cmdutil.UsageErr(err), "e.g. --listen 9464 (127.0.0.1 only), --listen 0.0.0.0:9464 (every interface)")
		}
		o.Listen = addr
	}
	if o.WebConfig != "" {
		if o.Listen == "" {
			return cmdutil.WithHint(cmdutil.UsageErrorf("--web-config is for --listen"),
				"e.g. chatq metrics --listen 0.0.0.0:9464 --web-config web.yml")
		}
		web, err := webconfig.Load(o.WebConfig)
		if err != nil {
			return webConfigError(o.WebConfig, err)
		}
		o.web = web
	}
	return nil
}

// webConfigError is a usage error for a --web-config file that cannot be
// read or used, naming the field at fault.
func webConfigError(path string, err error) error {
	var werr *webconfig.Error
	switch {
	case errors.As(err, &werr):
		err = cmdutil.UsageErrorf("--web-config %s: %v", path, werr)
		if werr.Hint != "" {
			return cmdutil.WithHint(err, werr.Hint)
		}
		return err
	case errors.Is(err, fs.ErrNotExist):
		return cmdutil.WithHint(cmdutil.UsageErrorf("--web-config: %v", err),
			"the file of tls_server_config and basic_auth_users, as Prometheus's exporters take with --web.config.file")
	}
	return cmdutil.UsageErrorf("--web-config: %v", err)
}

// listenAddr is --listen as host:port: a port alone (9464 or :9464) is on
// 127.0.0.1, so that metrics are not served beyond this machine unasked.
func listenAddr(s string) (string, error) {
	hostPort := s
	if !strings.Contains(s, ":") {
		hostPort = ":" + s
	}
	host, port, err := net.SplitHostPort(hostPort)
	if err != nil {
		return "", fmt.Errorf("invalid --listen %q: want HOST:PORT or a port", s)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("invalid --listen %q: the port must be a number from 0 to 65535", s)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

func (o *metricsOptions) exporter(rdb redis.UniversalClient, infof func(string, ...any)) *exporter.Exporter {
	return exporter.New(rdb, exporter.Options{
		Snapshot: snapshot.Options{Namespace: o.Namespace, Prefix: o.Prefix, Cluster: o.Cluster,
			Limits: o.Limits, Filter: o.filter, DeadLetters: true},
		Infof: infof, Hint: o.Hint, Web: o.web,
	})
}

func metricsRun(ctx context.Context, o *metricsOptions) error {
	rdb, err := o.Client()
	if err != nil {
		return err
	}
	if o.Listen != "" {
		return serve(ctx, o, rdb)
	}
	fams, err := o.exporter(rdb, o.IO.Infof).Scrape(ctx)
	if err != nil && ctx.Err() != nil {
		return ctx.Err()
	}
	if werr := o.write(fams); werr != nil {
		return werr
	}
	if err != nil {
		return fmt.Errorf("could not read the server (chatq_up 0 written): %w", err)
	}
	return nil
}

// write prints fams, or writes them to --file.
func (o *metricsOptions) write(fams []exposition.Family) error {
	format := exposition.Text
	if o.OpenMetrics {
		format = exposition.OpenMetrics
	}
	if o.File == "" {
		if o.JSON {
			return o.IO.WriteJSON(familiesJSON(fams))
		}
		return exposition.Write(o.IO.Out, fams, format)
	}
	if err := writeFileAtomic(o.File, func(f *os.File) error { return exposition.Write(f, fams, format) }); err != nil {
		return err
	}
	if o.JSON {
		n := 0
		for _, f := range fams {
			n += len(f.Samples)
		}
		return o.IO.WriteJSON(fileJSON{File: o.File, Up: fams[0].Samples[0].Value == 1, Samples: n})
	}
	return nil
}

type fileJSON struct {
	File    string `json:"file"`
	Up      bool   `json:"up"`
	Samples int    `json:"samples"`
}

// familyJSON is a metric in -o json: what the text format says, as JSON.
type familyJSON struct {
	Name    string       `json:"name"`
	Type    string       `json:"type"`
	Help    string       `json:"help"`
	Samples []sampleJSON `json:"samples"`
}

type sampleJSON struct {
	Labels map[string]string `json:"labels"`
	Value  json.Number       `json:"value"`
}

func familiesJSON(fams []exposition.Family) []familyJSON {
	out := []familyJSON{}
	for _, f := range fams {
		if len(f.Samples) == 0 {
			continue
		}
		j := familyJSON{Name: f.Name, Type: string(f.Type), Help: f.Help}
		for _, s := range f.Samples {
			l := map[string]string{}
			for _, lb := range s.Labels {
				l[lb.Name] = lb.Value
			}
			j.Samples = append(j.Samples, sampleJSON{l, json.Number(strconv.FormatFloat(s.Value, 'f', -1, 64))})
		}
		out = append(out, j)
	}
	return out
}

// writeFileAtomic writes path through a temporary file in the same
// directory (hidden, not ending in .prom, so that a textfile collector
// never reads it half written), made readable by all and synced, then
// renamed into place.
func writeFileAtomic(path string, write func(*os.File) error) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return cmdutil.WithHint(fmt.Errorf("--file: %w", err), "the directory must exist and be writable")
	}
	err = write(tmp)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("--file: %w", err)
	}
	return nil
}

// serve serves /metrics on --listen until ctx ends.
func serve(ctx context.Context, o *metricsOptions, rdb redis.UniversalClient) error {
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return cmdutil.WithHint(fmt.Errorf("--listen %s: %w", o.Listen, err),
			"is something listening there already? pick another port")
	}
	defer ln.Close()
	// A first read says at once whether chatq can read the server: a
	// mistake (a password, an ACL) ends it here; a server that is away
	// is waited for, answering chatq_up 0 meanwhile.
	exp := o.exporter(rdb, o.IO.Infof)
	if err := exp.Check(ctx); err != nil {
		return err
	}
	scheme := "http"
	if o.web != nil && o.web.TLS != nil {
		scheme = "https"
	}
	url := scheme + "://" + openable(o.Listen, ln.Addr().(*net.TCPAddr)) + "/metrics"
	if o.JSON {
		if err := o.IO.WriteJSON(struct {
			URL string `json:"url"`
		}{url}); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(o.IO.Out, url)
	}
	o.IO.Infof("serving metrics on %s; Ctrl-C to stop", url)
	if ip := ln.Addr().(*net.TCPAddr).IP; !ip.IsLoopback() && (o.web == nil || !o.web.Authenticates()) {
		o.IO.Infof("warning: %s is reachable from other machines: the metrics name queues, lists and chats", openable(o.Listen, ln.Addr().(*net.TCPAddr)))
		o.IO.Infof("hint: --web-config with basic_auth_users (and tls_server_config) asks scrapers for a password")
	}
	if err := exp.Serve(ctx, ln); err != nil && !errors.Is(err, net.ErrClosed) {
		return err
	}
	o.IO.Infof("stopped")
	return nil
}

// openable is the listener's address as a person would open it: Go
// reports a listener on every interface as [::] whatever was asked, so
// --listen :9464 and 0.0.0.0:9464 print 0.0.0.0:9464 (an explicit [::]
// stays).
func openable(asked string, a *net.TCPAddr) string {
	if !a.IP.IsUnspecified() {
		return a.String()
	}
	host, _, _ := net.SplitHostPort(asked)
	if host == "::" {
		return a.String()
	}
	return net.JoinHostPort("0.0.0.0", strconv.Itoa(a.Port))
}
