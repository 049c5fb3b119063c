// Package exporter turns snapshots of what chatq keeps (internal/cli/snapshot)
// into Prometheus metrics, and serves them on /metrics: chatq metrics.
// A scrape reads the server in bounded steps; when the server cannot be
// read, the scrape still answers, with chatq_up 0.
package exporter

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/exposition"
	"github.com/chatq-dev/chatq/internal/cli/snapshot"
	"github.com/chatq-dev/chatq/internal/cli/webconfig"
	"github.com/redis/go-redis/v9"
)

// Options configure an Exporter.
type Options struct {
	// Snapshot says what a scrape reads and its limits.
	Snapshot snapshot.Options
	// Infof, when set, is told (a line for stderr) when the served
	// metrics can no longer read the server, and when they can again, and
	// when the server refuses discovery.
	Infof func(format string, a ...any)
	// Hint, when set, returns the hint for an error (printed after it).
	Hint func(error) string
	// Web, when set, says how Serve serves: over TLS, behind basic auth
	// (chatq metrics --web-config). Nil: plain HTTP, no authentication.
	Web *webconfig.Config
}

// Exporter scrapes one server. Its scrapes run one at a time: requests
// that arrive while one is under way share its result.
type Exporter struct {
	col   *snapshot.Collector
	opt   Options
	clock func() time.Time

	scrapeMu sync.Mutex // one snapshot at a time
	lostAt   time.Time  // when the server stopped answering; zero while it answers
	refused  bool       // the server refuses discovery (SCAN): said once

	flightMu sync.Mutex
	flight   *flight // the scrape under way, shared by the requests that wait
}

type flight struct {
	done chan struct{}
	fams []exposition.Family
}

// New returns an Exporter reading through rdb (see snapshot.New, which
// adds a hook to it). Its snapshots keep no rates (Prometheus makes them
// from the counters).
func New(rdb redis.UniversalClient, opt Options) *Exporter {
	opt.Snapshot.NoRates = true
	clock := opt.Snapshot.Clock
	if clock == nil {
		clock = time.Now
	}
	return &Exporter{col: snapshot.New(rdb, opt.Snapshot), opt: opt, clock: clock}
}

// Scrape takes one snapshot and returns its metrics. When the server
// cannot be read it returns the error, with metrics that say so
// (chatq_up 0 and the scrape's own).
func (e *Exporter) Scrape(ctx context.Context) ([]exposition.Family, error) {
	e.scrapeMu.Lock()
	defer e.scrapeMu.Unlock()
	return e.scrape(ctx)
}

// Check reads the server once, as a served scrape does (telling of a loss
// as those do), and returns the error when it is one that waiting cannot
// fix (a password, an ACL): chatq metrics --listen checks so at start.
func (e *Exporter) Check(ctx context.Context) error {
	e.scrapeMu.Lock()
	defer e.scrapeMu.Unlock()
	_, err := e.scrape(ctx)
	switch {
	case err == nil || ctx.Err() != nil:
		return nil
	case !conn.Transient(err):
		return err
	}
	if e.lostAt.IsZero() {
		e.lostAt = e.clock()
		e.tell(err)
	}
	return nil
}

// watched is a scrape of the served metrics: it says once when the server
// can no longer be read, and once when it can again.
func (e *Exporter) watched(ctx context.Context) ([]exposition.Family, error) {
	e.scrapeMu.Lock()
	defer e.scrapeMu.Unlock()
	start := e.clock()
	fams, err := e.scrape(ctx)
	switch {
	case err != nil && e.lostAt.IsZero() && ctx.Err() == nil:
		e.lostAt = start
		e.tell(err)
	case err == nil && !e.lostAt.IsZero():
		e.infof("reconnected after %s: chatq_up is 1 again", e.clock().Sub(e.lostAt).Round(time.Millisecond))
		e.lostAt = time.Time{}
	}
	return fams, err
}

func (e *Exporter) scrape(ctx context.Context) ([]exposition.Family, error) {
	start := e.clock()
	s, err := e.col.Snapshot(ctx, "", "", 0)
	took := e.clock().Sub(start)
	if err != nil {
		return downFamilies(took), err
	}
	// Lists and chats are found by the same SCAN: one refusal, said once.
	if why := cmp.Or(s.ListsRefused, s.ChatsRefused); why != "" && !e.refused {
		e.refused = true
		e.infof("warning: the server refuses SCAN to this user (%s): no sharded lists or chats are read", why)
		e.infof("hint: grant it +scan, or run with --max-lists 0 --max-chats 0 (queues only, from their registry)")
	}
	return Families(s, took, e.opt.Snapshot.Limits), nil
}

// tell says on stderr that the server cannot be read.
func (e *Exporter) tell(err error) {
	if conn.Transient(err) {
		e.infof("lost the connection to the server (%v); chatq_up is 0 until it is back", err)
		return
	}
	e.infof("error: %v; chatq_up is 0 until the server can be read", err)
	if e.opt.Hint != nil {
		if h := e.opt.Hint(err); h != "" {
			e.infof("hint: %s", h)
		}
	}
}

func (e *Exporter) infof(format string, a ...any) {
	if e.opt.Infof != nil {
		e.opt.Infof(format, a...)
	}
}

// shared runs a scrape, or waits for the one under way and returns its
// metrics.
func (e *Exporter) shared(ctx context.Context) []exposition.Family {
	e.flightMu.Lock()
	if f := e.flight; f != nil {
		e.flightMu.Unlock()
		select {
		case <-f.done:
			return f.fams
		case <-ctx.Done():
			return downFamilies(0)
		}
	}
	f := &flight{done: make(chan struct{})}
	e.flight = f
	e.flightMu.Unlock()
	f.fams, _ = e.watched(ctx)
	e.flightMu.Lock()
	e.flight = nil
	e.flightMu.Unlock()
	close(f.done)
	return f.fams
}
