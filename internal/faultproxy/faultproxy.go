// Package faultproxy is a TCP proxy for tests that injects network faults
// between a client and a Redis server: it can blackhole the server's
// replies (read and drop them, so the client waits for a reply that never
// comes while the connection stays open), on every connection or only on
// connections opened from now on.
package faultproxy

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
)

// Proxy forwards connections on 127.0.0.1 to a target address.
type Proxy struct {
	target string
	ln     net.Listener
	all    atomic.Bool // blackhole replies on every connection
	fresh  atomic.Bool // blackhole replies on connections accepted from now on
	mu     sync.Mutex
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
}

// Start listens on 127.0.0.1:0 and forwards every connection to target.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, ln: ln, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's address, host:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Blackhole drops (on) or forwards again (off) the server's replies on
// every connection, open or future. Requests still reach the server.
func (p *Proxy) Blackhole(on bool) { p.all.Store(on) }

// BlackholeNew drops the server's replies on connections accepted from now
// on (on) and stops doing so for later ones (off); connections already open
// keep working. Useful to break only a client's next dial, such as the
// dedicated connection of a SUBSCRIBE.
func (p *Proxy) BlackholeNew(on bool) { p.fresh.Store(on) }

// Close stops listening and closes every connection.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	for c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.mu.Unlock()
	p.wg.Wait()
}

func (p *Proxy) track(c net.Conn, add bool) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if add {
		if p.conns == nil {
			return false
		}
		p.conns[c] = true
	} else if p.conns != nil {
		delete(p.conns, c)
	}
	return true
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		dead := p.fresh.Load()
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			client.Close()
			continue
		}
		if !p.track(client, true) || !p.track(server, true) {
			client.Close()
			server.Close()
			return
		}
		p.wg.Add(2)
		go func() { // requests
			defer p.wg.Done()
			_, _ = io.Copy(server, client)
			server.Close()
			client.Close()
			p.track(client, false)
		}()
		go func() { // replies
			defer p.wg.Done()
			buf := make([]byte, 32<<10)
			for {
				n, err := server.Read(buf)
				if n > 0 && !dead && !p.all.Load() {
					if _, werr := client.Write(buf[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			client.Close()
			server.Close()
			p.track(server, false)
		}()
	}
}
