package exporter

// A small HTTP/1.1 server of /metrics, written for chatq rather than taken
// from net/http: linking net/http's server (and its bundled HTTP/2) into
// chatq costs every chatq command's start-up 2.6% of its instructions
// (issue 24; docs/metrics.md, "The library, measured"). A scraper asks for
// little: GET (or HEAD) of /metrics, with no body, on a connection it keeps
// alive; so this serves that and refuses the rest in a few lines.

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chatq-dev/chatq/internal/exposition"
)

const (
	headTimeout = 10 * time.Second // to send a request's head (and to take its answer)
	idleTimeout = 2 * time.Minute  // between two requests on a kept-alive connection
	stopGrace   = 5 * time.Second  // for the answers under way when Serve stops
	maxHead     = 16 << 10         // bytes of a request line and headers
)

// Serve answers HTTP/1.1 requests on ln until ctx ends: /metrics in the
// format the scraper asks for (OpenMetrics, or Prometheus text), and a
// short page on /. (Not gzipped: a scrape is a few hundred kB at most,
// mostly on loopback.) A scrape ends before the timeout Prometheus sends
// (X-Prometheus-Scrape-Timeout-Seconds), with chatq_up 0 when the server is
// slower than that. When ctx ends Serve closes ln and the idle
// connections, lets the answers under way finish (for up to 5 seconds) and
// returns nil. It returns an error only when accepting fails.
func (e *Exporter) Serve(ctx context.Context, ln net.Listener) error {
	s := &server{e: e, head: headTimeout, idle: idleTimeout, grace: stopGrace}
	return s.serve(ctx, ln)
}

// server is one Serve: its timeouts (shorter in tests) and its connections.
type server struct {
	e                 *Exporter
	head, idle, grace time.Duration
	mu                sync.Mutex
	conns             map[net.Conn]bool // open connections: true while one answers a request
	stopping          bool
	wg                sync.WaitGroup // a goroutine per connection
}

func (s *server) serve(ctx context.Context, ln net.Listener) error {
	s.conns = make(map[net.Conn]bool)
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	// Requests outlive ctx (the answers under way finish) but not the grace.
	reqCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	err := s.accept(ctx, ln, reqCtx)
	s.stop(cancel)
	return err
}

func (s *server) accept(ctx context.Context, ln net.Listener, reqCtx context.Context) error {
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if ctx.Err() != nil {
			if err == nil {
				c.Close()
			}
			return nil
		}
		if err != nil {
			// Out of file descriptors, and the like: wait a little and
			// retry, as net/http does.
			if te, ok := err.(interface{ Temporary() bool }); ok && te.Temporary() {
				delay = min(max(2*delay, 5*time.Millisecond), time.Second)
				time.Sleep(delay)
				continue
			}
			return fmt.Errorf("serving metrics on %s: %w", ln.Addr(), err)
		}
		delay = 0
		s.mu.Lock()
		s.conns[c] = false
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			s.serveConn(reqCtx, c)
		}()
	}
}

// stop closes the idle connections, waits for the others to finish their
// answer (they close then), and after the grace closes them all.
func (s *server) stop(cancel context.CancelFunc) {
	s.mu.Lock()
	s.stopping = true
	for c, busy := range s.conns {
		if !busy {
			c.Close()
		}
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(s.grace):
	}
	cancel()
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
}

// busy marks c answering a request, or idle; it returns false when Serve
// is stopping, and c is to be closed.
func (s *server) busy(c net.Conn, busy bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns[c] = busy
	return !s.stopping
}

// request is what chatq reads of one: headers by lower-case name.
type request struct {
	method, path, proto string
	header              map[string]string
}

// serveConn answers the requests on c, one after the other, until the
// client closes c, asks to, or is too slow, or Serve stops.
func (s *server) serveConn(ctx context.Context, c net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	br := bufio.NewReaderSize(c, maxHead)
	c.SetReadDeadline(time.Now().Add(s.head))
	for first := true; ; first = false {
		if !first {
			c.SetReadDeadline(time.Now().Add(s.idle))
		}
		// The next request's first byte: till then c is idle.
		if _, err := br.Peek(1); err != nil || !s.busy(c, true) {
			return
		}
		if !first {
			c.SetReadDeadline(time.Now().Add(s.head))
		}
		req, status := readHead(br)
		if status != 0 {
			// A request cut off by the deadline or by the client gets no
			// answer; a malformed or oversized one gets its status.
			if status != errRead {
				s.respond(c, status, "", nil, false, true)
				lingerClose(c)
			}
			return
		}
		c.SetReadDeadline(time.Time{}) // the answer may take a scrape's time
		keep := req.proto == "HTTP/1.1" && !hasToken(req.header["connection"], "close")
		if !s.answer(ctx, c, req, keep) || !keep || !s.busy(c, false) {
			return
		}
	}
}

// errRead stands for a request that could not be read to its end.
const errRead = -1

// readHead reads a request line and headers, at most maxHead bytes. It
// returns a status (400, 431, 505, or errRead) for a request it cannot take.
func readHead(br *bufio.Reader) (*request, int) {
	var lines []string
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		n += len(line)
		switch {
		case n > maxHead || errors.Is(err, bufio.ErrBufferFull):
			return nil, 431
		case err != nil:
			return nil, errRead
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) == 0 {
			if len(lines) == 0 { // blank lines before a request are allowed
				continue
			}
			break
		}
		lines = append(lines, string(line))
	}
	// METHOD SP target SP HTTP/x.y
	method, rest, ok1 := strings.Cut(lines[0], " ")
	target, proto, ok2 := strings.Cut(rest, " ")
	switch {
	case !ok1 || !ok2 || method == "":
		return nil, 400
	case proto != "HTTP/1.1" && proto != "HTTP/1.0":
		return nil, 505 // HTTP/2's preface included: chatq speaks HTTP/1.x
	case !strings.HasPrefix(target, "/"):
		return nil, 400
	}
	path, _, _ := strings.Cut(target, "?")
	req := &request{method: method, path: path, proto: proto, header: make(map[string]string)}
	for _, l := range lines[1:] {
		name, value, ok := strings.Cut(l, ":")
		if !ok || name == "" || strings.ContainsAny(name, " \t") {
			return nil, 400 // line folding too, obsolete since RFC 7230
		}
		name, value = strings.ToLower(name), strings.TrimSpace(value)
		if old, ok := req.header[name]; ok {
			value = old + ", " + value // as a list: Accept may come twice
		}
		req.header[name] = value
	}
	// chatq takes no request bodies: one it would have to read past (to
	// the next request) is refused.
	if cl, ok := req.header["content-length"]; ok {
		if n, err := strconv.ParseUint(cl, 10, 63); err != nil || n > 0 {
			return nil, 400
		}
	}
	if _, ok := req.header["transfer-encoding"]; ok {
		return nil, 400
	}
	return req, 0
}

// answer writes the answer to req; false when c failed, or is to be
// closed.
func (s *server) answer(ctx context.Context, c net.Conn, req *request, keep bool) bool {
	const text = "text/plain; charset=utf-8"
	head := req.method == "HEAD" // the answer to GET, less its body
	var body bytes.Buffer
	switch {
	case req.path != "/" && req.path != "/metrics":
		return s.respond(c, 404, text, []byte("404 page not found\n"), head, !keep)
	case req.method != "GET" && req.method != "HEAD":
		return s.respond(c, 405, text, []byte("405 method not allowed\n"), head, !keep, "Allow: GET, HEAD")
	case req.path == "/":
		body.WriteString("chatq metrics: Prometheus metrics of chatq's queues, sharded lists and chats at /metrics\n")
		return s.respond(c, 200, text, body.Bytes(), head, !keep)
	}
	if v, err := strconv.ParseFloat(req.header["x-prometheus-scrape-timeout-seconds"], 64); err == nil && v > 0 {
		// Leave a tenth of the timeout to write the answer.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(v*0.9*float64(time.Second)))
		defer cancel()
	}
	fams := s.e.shared(ctx)
	format := exposition.Negotiate(req.header["accept"])
	// Buffered: the answer says its length.
	if err := exposition.Write(&body, fams, format); err != nil {
		s.e.infof("error: writing a scrape's answer: %v", err)
		s.respond(c, 500, text, []byte("500 internal server error\n"), head, true)
		return false
	}
	return s.respond(c, 200, format.ContentType(), body.Bytes(), head, !keep)
}

// respond writes a status line, headers and body (left out for HEAD, but
// counted in Content-Length), and says whether it was written.
func (s *server) respond(c net.Conn, status int, ctype string, body []byte, noBody, closing bool, extra ...string) bool {
	var h bytes.Buffer
	fmt.Fprintf(&h, "HTTP/1.1 %d %s\r\n", status, statusText[status])
	fmt.Fprintf(&h, "Date: %s\r\n", time.Now().UTC().Format("Mon, 02 Jan 2006 15:04:05 GMT"))
	if ctype != "" {
		fmt.Fprintf(&h, "Content-Type: %s\r\n", ctype)
	}
	fmt.Fprintf(&h, "Content-Length: %d\r\n", len(body))
	for _, l := range extra {
		h.WriteString(l + "\r\n")
	}
	if closing {
		h.WriteString("Connection: close\r\n")
	}
	h.WriteString("\r\n")
	if noBody {
		body = nil
	}
	c.SetWriteDeadline(time.Now().Add(s.head))
	bufs := net.Buffers{h.Bytes(), body}
	_, err := bufs.WriteTo(c)
	return err == nil
}

var statusText = map[int]string{
	200: "OK", 400: "Bad Request", 404: "Not Found", 405: "Method Not Allowed",
	431: "Request Header Fields Too Large", 500: "Internal Server Error", 505: "HTTP Version Not Supported",
}

// lingerClose, after an answer to a request that was not read to its end,
// reads (a little of) what the client still sends before c is closed:
// closing with unread data would reset c, and the client could lose the
// answer.
func lingerClose(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		io.Copy(io.Discard, io.LimitReader(c, 256<<10))
	}
}

// hasToken says whether the comma-separated list v has tok (any case).
func hasToken(v, tok string) bool {
	for t := range strings.SplitSeq(v, ",") {
		if strings.EqualFold(strings.TrimSpace(t), tok) {
			return true
		}
	}
	return false
}
