// Package faultproxy is a TCP proxy for tests that injects the faults a
// network and a server can cause: a reply dropped after the request reached
// the server, a request dropped before it did, a blackhole, added latency,
// and connections cut. It listens on a loopback port and forwards to one
// target address.
package faultproxy

import (
	"bytes"
	"net"
	"slices"
	"sync"
	"time"
)

// Proxy forwards TCP connections from its address to a target, with faults.
type Proxy struct {
	ln     net.Listener
	target string

	mu           sync.Mutex
	conns        map[net.Conn]int // each side of a connection -> its number, in order of acceptance
	accepted     int
	dropRequests int
	dropReplies  int
	dropReplyTo  []byte
	exemptOn     [][]byte
	blackhole    bool
	latency      time.Duration
	requests     int
	replies      int
	droppedReqs  int
	droppedReps  int
	closed       bool
	wg           sync.WaitGroup
}

// Start listens on 127.0.0.1 on a free port and forwards to target.
func Start(target string) (*Proxy, error) { return StartOn("127.0.0.1:0", target) }

// StartOn listens on addr (host:port) and forwards to target.
func StartOn(addr, target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]int{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the host:port clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// DropRequests discards the next n chunks a client sends, so the server
// never sees them: the client waits for a reply that will not come.
func (p *Proxy) DropRequests(n int) { p.set(func() { p.dropRequests = n }) }

// DropReplies discards the next n chunks the server sends: the request was
// applied, but the client never hears so.
func (p *Proxy) DropReplies(n int) { p.set(func() { p.dropReplies = n }) }

// DropReplyTo discards the reply to the next request that contains pattern
// (a command name such as "EVALSHA", or a key), once: that request is
// applied, and its client never hears so.
func (p *Proxy) DropReplyTo(pattern string) { p.set(func() { p.dropReplyTo = []byte(pattern) }) }

// Exempt spares from every fault (but CutAll and Close) each connection
// whose client sends a request containing one of patterns (in any case),
// from that
// request on: a replica's replication link (REPLCONF, PSYNC) through the
// proxy in front of its master, whose stream a dropped chunk would corrupt
// where TCP never would.
func (p *Proxy) Exempt(patterns ...string) {
	p.set(func() {
		p.exemptOn = nil
		for _, pat := range patterns {
			p.exemptOn = append(p.exemptOn, bytes.ToUpper([]byte(pat)))
		}
	})
}

// Blackhole, while on, discards everything in both directions, as a network
// that lost the route does.
func (p *Proxy) Blackhole(on bool) { p.set(func() { p.blackhole = on }) }

// Latency delays every chunk in both directions by d.
func (p *Proxy) Latency(d time.Duration) { p.set(func() { p.latency = d }) }

// Counts returns how many chunks went each way and how many were dropped.
func (p *Proxy) Counts() (requests, replies, droppedRequests, droppedReplies int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests, p.replies, p.droppedReqs, p.droppedReps
}

// Open is how many connections are open through the proxy.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) / 2
}

// CutAll closes every open connection, as a server restart or a network
// reset does; new connections are still accepted.
func (p *Proxy) CutAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
	}
}

// CutOldest closes the n connections accepted first among those open, as a
// server's CLIENT KILL of some clients does: a pool then holds broken
// connections under live ones.
func (p *Proxy) CutOldest(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	var seqs []int
	for _, seq := range p.conns {
		seqs = append(seqs, seq)
	}
	slices.Sort(seqs)
	seqs = slices.Compact(seqs)
	if n > len(seqs) {
		n = len(seqs)
	}
	for c, seq := range p.conns {
		if n > 0 && seq <= seqs[n-1] {
			_ = c.Close()
		}
	}
}

// Close stops listening, closes every connection and waits for the
// forwarding goroutines to end.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.CutAll()
	p.wg.Wait()
	return err
}

func (p *Proxy) set(fn func()) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fn()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			_ = c.Close()
			continue
		}
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			_ = c.Close()
			_ = s.Close()
			return
		}
		p.accepted++
		p.conns[c] = p.accepted
		p.conns[s] = p.accepted
		p.mu.Unlock()
		l := new(link)
		p.wg.Add(2)
		go p.pipe(c, s, true, l)
		go p.pipe(s, c, false, l)
	}
}

// link is the state of one proxied connection, shared by its two
// directions under p.mu.
type link struct {
	pending int  // replies to drop (DropReplyTo)
	exempt  bool // spared from faults (Exempt)
}

// pipe copies chunks from src to dst, applying the faults of its direction;
// when either side ends it closes both.
func (p *Proxy) pipe(src, dst net.Conn, request bool, l *link) {
	defer p.wg.Done()
	defer func() {
		_ = src.Close()
		_ = dst.Close()
		p.mu.Lock()
		delete(p.conns, src)
		delete(p.conns, dst)
		p.mu.Unlock()
	}()
	buf := make([]byte, 64*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			if request && !l.exempt {
				for _, pat := range p.exemptOn {
					if bytes.Contains(bytes.ToUpper(buf[:n]), pat) {
						l.exempt = true
					}
				}
			}
			drop := p.blackhole && !l.exempt
			if l.exempt {
				// spared: neither dropped, delayed nor counted
			} else if request {
				p.requests++
				if !drop && p.dropRequests > 0 {
					p.dropRequests--
					drop = true
				}
				if drop {
					p.droppedReqs++
				} else if p.dropReplyTo != nil && bytes.Contains(buf[:n], p.dropReplyTo) {
					p.dropReplyTo = nil
					l.pending++
				}
			} else {
				p.replies++
				if !drop && p.dropReplies > 0 {
					p.dropReplies--
					drop = true
				}
				if !drop && l.pending > 0 {
					l.pending--
					drop = true
				}
				if drop {
					p.droppedReps++
				}
			}
			delay := p.latency
			if l.exempt {
				delay = 0
			}
			p.mu.Unlock()
			if delay > 0 {
				time.Sleep(delay)
			}
			if !drop {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}
