package faultproxy

import (
	"bufio"
	"net"
	"testing"
	"time"
)

// A tiny echo server stands in for Redis: replies pass, then vanish.
func TestBlackhole(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				buf := make([]byte, 1024)
				for {
					n, err := c.Read(buf)
					if err != nil {
						return
					}
					c.Write(buf[:n])
				}
			}()
		}
	}()
	p, err := Start(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		return c, bufio.NewReader(c)
	}
	// A reply is waited for 10s; its absence is concluded after 200ms
	// (a slow machine can only make the test pass, never fail, there).
	ask := func(c net.Conn, r *bufio.Reader, wait time.Duration) bool {
		c.Write([]byte("ping\n"))
		c.SetReadDeadline(time.Now().Add(wait))
		_, err := r.ReadString('\n')
		return err == nil
	}
	c1, r1 := dial()
	if !ask(c1, r1, 10*time.Second) {
		t.Fatal("no reply through the proxy")
	}
	p.BlackholeNew(true)
	c2, r2 := dial()
	if ask(c2, r2, 200*time.Millisecond) || !ask(c1, r1, 10*time.Second) {
		t.Fatal("BlackholeNew: want the new connection dropped, the old one working")
	}
	p.Blackhole(true)
	if ask(c1, r1, 200*time.Millisecond) {
		t.Fatal("Blackhole: reply came through")
	}
}
