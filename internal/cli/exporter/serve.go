package exporter

// /metrics is served by net/http's server: the part of Go a reviewer
// already trusts with parsing requests from the network. (chatq had a small
// HTTP/1.1 server of its own from issue 24 to issue 37, to save every
// chatq command the start-up cost of linking net/http's server;
// docs/performance.md has what that cost is now.)

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/exposition"
	"github.com/chatq-dev/chatq/internal/cli/webconfig"
)

const (
	// headTimeout is the time a client has to send a request's head, and
	// to take an answer once the scrape is done.
	headTimeout = 10 * time.Second
	// idleTimeout is the time between two requests on a kept-alive
	// connection.
	idleTimeout = 2 * time.Minute
	// stopGrace is the time the answers under way have to finish once
	// Serve stops.
	stopGrace = 5 * time.Second
	// maxHead bounds a request line and its headers (net/http allows 4 KiB
	// more than it is told).
	maxHead = 16 << 10
	// maxScrape bounds a scrape that does not say its timeout: Prometheus
	// says it (X-Prometheus-Scrape-Timeout-Seconds), and its scrape
	// timeouts are at most its scrape interval, a minute or so.
	maxScrape = 2 * time.Minute
)

// Serve answers HTTP requests on ln until ctx ends: /metrics in the format
// the scraper asks for (OpenMetrics, or Prometheus text), and a short page
// on /; over TLS and behind basic auth when Options.Web says so. (Not
// gzipped: a scrape is a few hundred kB at most, mostly on loopback.) A
// scrape ends before the timeout Prometheus sends
// (X-Prometheus-Scrape-Timeout-Seconds), with chatq_up 0 when the server is
// slower than that. When ctx ends Serve closes ln and the idle
// connections, lets the answers under way finish (for up to 5 seconds) and
// returns nil. It returns an error only when accepting fails.
func (e *Exporter) Serve(ctx context.Context, ln net.Listener) error {
	s := &server{e: e, head: headTimeout, idle: idleTimeout, grace: stopGrace, web: e.opt.Web}
	return s.serve(ctx, ln)
}

// server is one Serve: its timeouts (shorter in tests) and its web
// configuration (nil: plain HTTP, no authentication).
type server struct {
	e                 *Exporter
	head, idle, grace time.Duration
	web               *webconfig.Config
}

func (s *server) serve(ctx context.Context, ln net.Listener) error {
	// Scrapes outlive ctx (the answers under way finish) but not the
	// grace; nor do they end when their client hangs up, since other
	// requests may share them.
	scrapeCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	mux := http.NewServeMux()
	// GET patterns take HEAD too; other methods get 405 with Allow.
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "chatq metrics: Prometheus metrics of chatq's queues, sharded lists and chats at /metrics")
	})
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) { s.metrics(scrapeCtx, w, r) })
	var handler http.Handler = mux
	if s.web != nil {
		handler = s.web.Authenticate(handler)
	}
	var http1 http.Protocols
	http1.SetHTTP1(true) // a scraper needs no HTTP/2, nor its attack surface
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: s.head,
		IdleTimeout:       s.idle,
		MaxHeaderBytes:    maxHead,
		// The whole answer, from the end of the request's head: the scrape
		// (at most maxScrape, or Prometheus's timeout), then the writing,
		// whose deadline metrics sets again once the scrape is done. A
		// shorter WriteTimeout would cut a slow scrape that is still
		// within Prometheus's timeout.
		WriteTimeout: maxScrape + s.head,
		Protocols:    &http1,
		// A failed TLS handshake, say: on stderr as chatq's other lines.
		ErrorLog: log.New(infoWriter{s.e}, "", 0),
	}
	served := make(chan error, 1)
	if s.web != nil && s.web.TLS != nil {
		srv.TLSConfig = s.web.TLS
		go func() { served <- srv.ServeTLS(ln, "", "") }() // the certificate comes from TLSConfig
	} else {
		go func() { served <- srv.Serve(ln) }()
	}
	select {
	case err := <-served:
		// Accepting failed (net/http retries the temporary failures).
		return fmt.Errorf("serving metrics on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	stopCtx, stopped := context.WithTimeout(context.WithoutCancel(ctx), s.grace)
	defer stopped()
	if err := srv.Shutdown(stopCtx); err != nil {
		// Past the grace: the answers still under way are cut off.
		srv.Close()
	}
	cancel()
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serving metrics on %s: %w", ln.Addr(), err)
	}
	return nil
}

// metrics answers a scrape, in the format asked for.
func (s *server) metrics(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	timeout := maxScrape
	if v, err := strconv.ParseFloat(r.Header.Get("X-Prometheus-Scrape-Timeout-Seconds"), 64); err == nil && v > 0 {
		// Leave a tenth of the timeout to write the answer.
		timeout = min(timeout, time.Duration(v*0.9*float64(time.Second)))
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	fams := s.e.shared(ctx)
	format := exposition.Negotiate(r.Header.Get("Accept"))
	// Buffered: the answer says its length (HEAD too).
	var body bytes.Buffer
	if err := exposition.Write(&body, fams, format); err != nil {
		s.e.infof("error: writing a scrape's answer: %v", err)
		http.Error(w, "500 internal server error", http.StatusInternalServerError)
		return
	}
	// The scrape may have taken most of WriteTimeout: the answer has its
	// own time to be written.
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.head))
	w.Header().Set("Content-Type", format.ContentType())
	w.Header().Set("Content-Length", strconv.Itoa(body.Len()))
	w.Write(body.Bytes())
}

// infoWriter writes net/http's log lines through Exporter.infof.
type infoWriter struct{ e *Exporter }

func (w infoWriter) Write(p []byte) (int, error) {
	w.e.infof("%s", strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
