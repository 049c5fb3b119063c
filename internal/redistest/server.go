package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Server is a redis-server process that a test owns, so that it can restart
// or kill it. It keeps an append-only file (fsync always) in a temporary
// directory, so a restart or a SIGKILL loses nothing that was acknowledged.
type Server struct {
	Port int
	Dir  string
	args []string
	cmd  *exec.Cmd
	t    testing.TB
}

// StartServer starts a redis-server on a free loopback port with args added,
// stopped when t ends. Without a redis-server binary it skips t, or fails it
// when CHATQ_REQUIRE_REDIS=1.
func StartServer(t testing.TB, args ...string) *Server {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CHATQ_REQUIRE_REDIS") == "1" {
			t.Fatal("CHATQ_REQUIRE_REDIS=1 but redis-server is not installed")
		}
		t.Skip("redis-server not installed")
	}
	s := &Server{Port: freePort(t), Dir: t.TempDir(), args: args, t: t}
	s.start()
	t.Cleanup(s.Kill)
	return s
}

// Addr is host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.Port) }

// URL is the server's redis:// URL.
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Start starts the server again after Kill, on the same port and data.
func (s *Server) Start() {
	s.t.Helper()
	s.start()
}

func (s *Server) start() {
	s.t.Helper()
	args := append([]string{"--bind", "127.0.0.1", "--port", strconv.Itoa(s.Port),
		"--dir", s.Dir, "--save", "", "--appendonly", "yes", "--appendfsync", "always",
		"--logfile", "redis.log"}, s.args...)
	s.cmd = exec.Command("redis-server", args...)
	if err := s.cmd.Start(); err != nil {
		s.t.Fatalf("redis-server: %v", err)
	}
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := c.Ping(s.t.Context()).Err()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(s.Dir + "/redis.log")
			s.t.Fatalf("redis-server on %s did not start: %v\n%s", s.Addr(), err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Kill stops the server with SIGKILL and waits for it to exit.
func (s *Server) Kill() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Kill()
	_ = s.cmd.Wait()
	s.cmd = nil
}

// Restart kills the server and starts it again on the same port and data,
// as a crash and a supervisor's restart would; it returns once the server
// answers (it may still be loading its append-only file for a moment).
func (s *Server) Restart() {
	s.t.Helper()
	s.Kill()
	s.start()
}

// Client returns a client for the server, closed when the test ends.
func (s *Server) Client() *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: s.Addr()})
	s.t.Cleanup(func() { c.Close() })
	return c
}

func freePort(t testing.TB) int {
	t.Helper()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		// A cluster node also needs port+10000 for its bus.
		if port+10000 > 65535 {
			continue
		}
		if bus, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+10000)); err == nil {
			bus.Close()
			return port
		}
	}
	t.Fatal("no free port pair")
	return 0
}
