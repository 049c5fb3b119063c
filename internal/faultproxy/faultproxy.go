// Package faultproxy is a TCP proxy for tests that loses a server's reply
// on purpose: the request reaches the server, which runs it, and the
// client's connection is closed before the reply arrives. It is how tests
// check what a command does when it cannot know whether its write
// happened.
package faultproxy

import (
	"bytes"
	"net"
	"sync"
)

// Proxy forwards connections to a target address.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	match func(request []byte) bool // armed by DropReply, used once
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// Start listens on 127.0.0.1 (a free port) and forwards to target.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// DropReply arms the proxy once: the next request (one read from a client,
// usually one command or one whole pipeline) for which match is true is
// sent to the server, and once the server has started to answer, the
// client's connection is closed without the answer.
func (p *Proxy) DropReply(match func(request []byte) bool) {
	p.mu.Lock()
	p.match = match
	p.mu.Unlock()
}

// Contains is a DropReply matcher: the request holds every one of subs.
func Contains(subs ...string) func([]byte) bool {
	return func(req []byte) bool {
		for _, s := range subs {
			if !bytes.Contains(req, []byte(s)) {
				return false
			}
		}
		return true
	}
}

// Armed reports whether a DropReply is still waiting for its request.
func (p *Proxy) Armed() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.match != nil
}

// Close stops the proxy and closes its connections.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) track(c net.Conn, on bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if on {
		p.conns[c] = true
	} else {
		delete(p.conns, c)
	}
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		p.track(client, true)
		p.track(server, true)
		p.wg.Add(1)
		go p.serve(client, server)
	}
}

// serve copies one connection both ways. When a request matches, the
// server's next bytes (the start of its reply) are swallowed and both
// connections closed.
func (p *Proxy) serve(client, server net.Conn) {
	defer p.wg.Done()
	drop := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 64<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 {
				select {
				case <-drop:
					client.Close()
					server.Close()
					return
				default:
				}
				if _, err := client.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				client.Close()
				return
			}
		}
	}()
	buf := make([]byte, 64<<10)
	for {
		n, err := client.Read(buf)
		if n > 0 {
			p.mu.Lock()
			m := p.match
			if m != nil && m(buf[:n]) {
				p.match = nil
				drop <- struct{}{}
			}
			p.mu.Unlock()
			if _, err := server.Write(buf[:n]); err != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	server.Close()
	<-done
	client.Close()
	p.track(client, false)
	p.track(server, false)
}

