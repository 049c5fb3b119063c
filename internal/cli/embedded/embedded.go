// Package embedded runs the in-memory Redis-protocol server (miniredis) that
// `chatq dev`, `chatq demo` and the tests use when no Redis is installed.
package embedded

import (
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// Server is a running embedded server.
type Server struct {
	*miniredis.Miniredis
	stop chan struct{}
	wg   sync.WaitGroup
}

// Start listens on addr ("127.0.0.1:0" picks a free port). miniredis only
// expires keys when told time has passed, so a ticker moves its clock along
// with the wall clock, as a real server's would.
func Start(addr string) (*Server, error) {
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr(addr); err != nil {
		return nil, err
	}
	s := &Server{Miniredis: m, stop: make(chan struct{})}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		last := time.Now()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case now := <-t.C:
				m.FastForward(now.Sub(last))
				last = now
			}
		}
	}()
	return s, nil
}

// URL is the redis:// URL clients use to reach the server.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Close stops the server.
func (s *Server) Close() {
	close(s.stop)
	s.wg.Wait()
	s.Miniredis.Close()
}
