package exporter

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/snapshot"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// running is a server under test.
type running struct {
	addr string
	ln   *countingListener
	stop context.CancelFunc
	done chan error // Serve's result
}

// start runs s on a 127.0.0.1:0 listener until the test ends.
func start(t *testing.T, s *server) *running {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{addr: ln.Addr().String(), ln: &countingListener{Listener: ln}, stop: cancel, done: make(chan error, 1)}
	go func() { r.done <- s.serve(ctx, r.ln) }()
	t.Cleanup(func() {
		cancel()
		<-r.done
	})
	return r
}

// serve runs e.Serve until the test ends and returns its URL.
func serve(t *testing.T, e *Exporter) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func embedded(t *testing.T) *Exporter {
	b := redistest.Embedded(t)
	return New(b.Client, Options{Snapshot: snapshot.Options{Prefix: b.Prefix, Limits: limits}})
}

// roundTrip writes raw on a new connection to addr and reads the answer
// to its end (the server closing the connection).
func roundTrip(t *testing.T, addr, raw string) *http.Response {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	if _, err := io.WriteString(c, raw); err != nil {
		t.Fatal(err)
	}
	all, err := io.ReadAll(c) // ends only when the server closes
	if err != nil {
		t.Fatalf("%v after %q", err, all)
	}
	resp, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(all)), nil)
	if err != nil {
		t.Fatalf("%v in %q", err, all)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return resp
}

// A client keeps one connection for several scrapes.
func TestServeKeepAlive(t *testing.T) {
	r := start(t, &server{e: embedded(t), head: headTimeout, idle: idleTimeout, grace: stopGrace})
	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	for _, method := range []string{"GET", "HEAD", "HEAD /none", "GET"} {
		method, path, _ := strings.Cut(method, " ")
		req, _ := http.NewRequest(method, "http://"+r.addr+cmp.Or(path, "/metrics"), nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if path != "" {
			// Not found, said without a body (which would be taken for
			// the next answer).
			if resp.StatusCode != 404 || len(body) != 0 {
				t.Fatalf("%s %s: %d %q", method, path, resp.StatusCode, body)
			}
			continue
		}
		if resp.StatusCode != 200 || resp.Close {
			t.Fatalf("%s: %d, close %v", method, resp.StatusCode, resp.Close)
		}
		// HEAD: the length of the scrape, without it.
		if method == "HEAD" && (len(body) != 0 || resp.ContentLength < 100) {
			t.Errorf("HEAD: %d bytes, Content-Length %d", len(body), resp.ContentLength)
		}
		if method == "GET" && (!strings.Contains(string(body), "\nchatq_up 1\n") || int64(len(body)) != resp.ContentLength) {
			t.Errorf("GET: Content-Length %d of %d bytes:\n%s", resp.ContentLength, len(body), body)
		}
	}
	if n := r.ln.n.Load(); n != 1 {
		t.Errorf("%d connections for 4 requests", n)
	}
}

// HTTP/1.0 and Connection: close get their answer, then the server
// closes; so does a request net/http refuses as malformed: no Host in
// HTTP/1.1, a folded header, a head past 16 KiB (net/http allows 4 KiB
// more than it is told: 431), HTTP/2's preface (chatq serves HTTP/1
// only).
func TestServeClose(t *testing.T) {
	r := start(t, &server{e: embedded(t), head: headTimeout, idle: idleTimeout, grace: stopGrace})
	for _, c := range []struct {
		raw    string
		status int
		body   string
	}{
		{"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, Close\r\n\r\n", 200, "\nchatq_up 1\n"},
		{"GET /metrics?x=1 HTTP/1.0\r\n\r\n", 200, "\nchatq_up 1\n"},
		{"GET / HTTP/1.0\r\nACCEPT: */*\r\n\r\n", 200, "/metrics"},
		{"GET /metrics HTTP/1.1\r\n\r\n", 400, "missing required Host header"},
		{"GET /metrics HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400, ""},
		{"GARBAGE\r\n\r\n", 400, ""},
		{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 400, ""},
		{"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 24<<10) + "\r\n\r\n", 431, ""},
		{"GET /metrics HTTP/1.1\r\nHost: x\r\n" + strings.Repeat("X-Many: a\r\n", 2500) + "\r\n", 431, ""},
	} {
		resp := roundTrip(t, r.addr, c.raw)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != c.status || !strings.Contains(string(body), c.body) {
			t.Errorf("%.40q: %d, want %d\n%s", c.raw, resp.StatusCode, c.status, body)
		}
	}
}

// Paths other than / and /metrics are not found; methods other than GET
// and HEAD are not allowed, and the answer says which are.
func TestServeRefuses(t *testing.T) {
	url := serve(t, embedded(t))
	resp, err := http.Get(url + "/metrics/")
	if err != nil || resp.StatusCode != 404 {
		t.Fatalf("/metrics/: %v %v", resp, err)
	}
	resp.Body.Close()
	req, _ := http.NewRequest("DELETE", url+"/metrics", nil)
	resp, err = http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 405 || resp.Header.Get("Allow") != "GET, HEAD" {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	resp.Body.Close()
}

// A client that opens a connection and sends nothing, or half a request,
// is closed after the deadline, without an answer.
func TestServeSlowClient(t *testing.T) {
	r := start(t, &server{e: embedded(t), head: 100 * time.Millisecond, idle: idleTimeout, grace: stopGrace})
	for _, sent := range []string{"", "GET /metrics HTTP/1.1\r\n"} {
		c, err := net.Dial("tcp", r.addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, sent)
		c.SetReadDeadline(time.Now().Add(time.Minute)) // only so that a failure ends
		got, err := io.ReadAll(c)
		if err != nil || len(got) != 0 {
			t.Errorf("sent %q: read %q, %v; want the connection closed", sent, got, err)
		}
		c.Close()
	}
}

// A kept-alive connection with no request is closed after the idle
// timeout.
func TestServeIdle(t *testing.T) {
	r := start(t, &server{e: embedded(t), head: headTimeout, idle: 100 * time.Millisecond, grace: stopGrace})
	c, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	if n, err := br.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Errorf("read %d, %v after the idle timeout; want EOF", n, err)
	}
}

// When Serve stops, a scrape under way finishes and is answered; idle
// connections (kept alive after a request) are closed; Serve returns nil and no longer listens. A
// scrape that outlasts the grace is cut off.
func TestServeStopsWithScrape(t *testing.T) {
	b, proxy := redistest.Proxied(t, redistest.Embedded(t))
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	e := New(rdb, Options{Snapshot: snapshot.Options{Prefix: b.Prefix, Limits: limits}})
	for _, grace := range []time.Duration{stopGrace, 50 * time.Millisecond} {
		r := start(t, &server{e: e, head: headTimeout, idle: idleTimeout, grace: grace})
		idle := keptAlive(t, r.addr)
		if grace == stopGrace {
			proxy.Latency(50 * time.Millisecond)
		} else {
			proxy.Blackhole(true) // a scrape that does not end
		}
		type result struct {
			status int
			body   string
			err    error
		}
		got := make(chan result, 1)
		go func() {
			resp, err := http.Get("http://" + r.addr + "/metrics")
			if err != nil {
				got <- result{err: err}
				return
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			got <- result{resp.StatusCode, string(body), err}
		}()
		// Stop once the scrape is under way.
		underWay(t, e)
		r.stop()
		if err := <-r.done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		r.done <- nil // for the cleanup
		res := <-got
		if grace == stopGrace && (res.err != nil || res.status != 200 || !strings.Contains(res.body, "\nchatq_up 1\n")) {
			t.Errorf("the scrape under way: %d %v\n%s", res.status, res.err, res.body)
		}
		if grace < stopGrace && res.err == nil {
			t.Errorf("a scrape past the grace was answered: %d", res.status)
		}
		idle.SetReadDeadline(time.Now().Add(time.Minute))
		if _, err := idle.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Errorf("the idle connection: %v, want EOF", err)
		}
		if c, err := net.Dial("tcp", r.addr); err == nil {
			c.Close()
			t.Error("still listening after Serve returned")
		}
		proxy.Latency(0)
		proxy.Blackhole(false)
		proxy.CutAll()
		// Let the scrape cut off end before the next round.
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
			e.flightMu.Lock()
			f := e.flight
			e.flightMu.Unlock()
			if f == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("the scrape cut off did not end")
			}
		}
	}
}

// keptAlive is a connection to addr that has had an answer, and is now
// idle.
func keptAlive(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n")
	c.SetReadDeadline(time.Now().Add(time.Minute))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 200 || resp.Close {
		t.Fatalf("%v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	c.SetReadDeadline(time.Time{})
	return c
}

// underWay waits for a scrape of e to be under way, and returns it.
func underWay(t *testing.T, e *Exporter) *flight {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		e.flightMu.Lock()
		f := e.flight
		e.flightMu.Unlock()
		if f != nil {
			return f
		}
		if time.Now().After(deadline) {
			t.Fatal("no scrape under way")
		}
	}
}

// A client that hangs up mid-scrape does not end the scrape (other
// requests may share it): it reads the server to its end, and the server
// answers the next request.
func TestServeClientHangsUp(t *testing.T) {
	b, proxy := redistest.Proxied(t, redistest.Embedded(t))
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	e := New(rdb, Options{Snapshot: snapshot.Options{Prefix: b.Prefix, Limits: limits}})
	r := start(t, &server{e: e, head: headTimeout, idle: idleTimeout, grace: stopGrace})
	proxy.Latency(50 * time.Millisecond)
	c, err := net.Dial("tcp", r.addr)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
	f := underWay(t, e)
	c.Close()
	select {
	case <-f.done:
	case <-time.After(time.Minute):
		t.Fatal("the scrape did not end")
	}
	if up := f.fams[0].Samples[0].Value; up != 1 {
		t.Errorf("the scrape whose client hung up says chatq_up %v: it was cut off", up)
	}
	proxy.Latency(0)
	resp, err := http.Get("http://" + r.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "\nchatq_up 1\n") {
		t.Errorf("after a hang-up: %d\n%s", resp.StatusCode, body)
	}
}
