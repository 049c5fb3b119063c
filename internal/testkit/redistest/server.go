package redistest

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/faultproxy"
	"github.com/redis/go-redis/v9"
)

// Server is a redis-server process that a test owns, so that it can restart
// or kill it. It keeps an append-only file (fsync always) in a temporary
// directory, so a restart or a SIGKILL loses nothing that was acknowledged.
type Server struct {
	Port int
	Dir  string
	// Proxy, in a cluster started with Proxied, is the fault proxy in
	// front of the node, whose address the node gives clients.
	Proxy *faultproxy.Proxy
	args  []string
	cmd   *exec.Cmd
	t     testing.TB
	tls   *tls.Config // its clients', when it speaks only TLS
}

// StartServer starts a redis-server on a free loopback port with args added,
// stopped when t ends. Without a redis-server binary it skips t, or fails it
// when CHATQ_REQUIRE_REDIS=1.
func StartServer(t testing.TB, args ...string) *Server {
	t.Helper()
	requireServer(t)
	return startServer(t, freePort(t), args...)
}

// startServer starts a redis-server on port.
func startServer(t testing.TB, port int, args ...string) *Server {
	t.Helper()
	return startServerTLS(t, port, nil, args...)
}

// startServerTLS starts a redis-server on port that speaks only TLS with
// files (plain TCP when files is nil).
func startServerTLS(t testing.TB, port int, files *TLSFiles, args ...string) *Server {
	t.Helper()
	s := &Server{Port: port, Dir: t.TempDir(), t: t}
	if files != nil {
		args = append(files.serverArgs(port), args...)
		s.tls = files.ClientConfig(t)
	}
	s.args = args
	s.start()
	t.Cleanup(s.Kill)
	return s
}

// TLSFiles name PEM files: a CA, and a certificate (for localhost and
// 127.0.0.1) and its key that the CA signed.
type TLSFiles struct{ CA, Cert, Key string }

// serverArgs are the options that make a redis-server (or a sentinel) speak
// only TLS on port, replicate over TLS, and not ask clients for
// certificates.
func (f *TLSFiles) serverArgs(port int) []string {
	return []string{"--port", "0", "--tls-port", strconv.Itoa(port), "--tls-cert-file", f.Cert,
		"--tls-key-file", f.Key, "--tls-ca-cert-file", f.CA, "--tls-auth-clients", "no", "--tls-replication", "yes"}
}

// ClientConfig is a client's TLS configuration that trusts the CA.
func (f *TLSFiles) ClientConfig(t testing.TB) *tls.Config {
	t.Helper()
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s: no certificate", f.CA)
	}
	return &tls.Config{RootCAs: pool, ServerName: "127.0.0.1", MinVersion: tls.VersionTLS12}
}

// requireServer skips t without a redis-server binary, or fails it when
// CHATQ_REQUIRE_REDIS=1.
func requireServer(t testing.TB) {
	t.Helper()
	// A test that starts servers of its own (restarts, kills, faults,
	// other libraries' workers) belongs to the real-server pass: the
	// README's `go test ./...` stays on the embedded server, and quick,
	// even where redis-server is installed.
	if os.Getenv("CHATQ_TEST_REDIS_URL") == "" && os.Getenv("CHATQ_REQUIRE_REDIS") != "1" {
		t.Skip("starts its own redis-server: runs in the real-server pass (set CHATQ_TEST_REDIS_URL, or CHATQ_REQUIRE_REDIS=1)")
	}
	if _, err := exec.LookPath("redis-server"); err != nil {
		if os.Getenv("CHATQ_REQUIRE_REDIS") == "1" {
			t.Fatal("CHATQ_REQUIRE_REDIS=1 but redis-server is not installed")
		}
		t.Skip("redis-server not installed")
	}
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
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1, TLSConfig: s.tls})
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
	c := redis.NewClient(&redis.Options{Addr: s.Addr(), TLSConfig: s.tls})
	s.t.Cleanup(func() { c.Close() })
	return c
}

// freePort returns a loopback port that nothing listens on, nor on the port
// 10000 above it (a cluster node's bus port). CI_PORTS=LO-HI (as .ci/run and
// scripts/compat.sh take it) keeps it in that range, on a machine shared
// with other runs; otherwise the system picks it.
func freePort(t testing.TB) int {
	t.Helper()
	lo, hi, ranged := portRange(t)
	for range 1000 {
		port := 0
		if ranged {
			port = lo + rand.IntN(hi-lo+1)
		}
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err != nil {
			if ranged {
				continue
			}
			t.Fatal(err)
		}
		port = ln.Addr().(*net.TCPAddr).Port
		ln.Close()
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

// portRange parses CI_PORTS (LO-HI); ranged is false when it is unset.
func portRange(t testing.TB) (lo, hi int, ranged bool) {
	t.Helper()
	s := os.Getenv("CI_PORTS")
	if s == "" {
		return 0, 0, false
	}
	l, h, ok := strings.Cut(s, "-")
	lo, err1 := strconv.Atoi(l)
	hi, err2 := strconv.Atoi(h)
	if !ok || err1 != nil || err2 != nil || lo < 1 || hi < lo || hi > 55535 {
		t.Fatalf("CI_PORTS=%q: want LO-HI, at most 55535 (the cluster bus is +10000)", s)
	}
	return lo, hi, true
}

// Cluster is a Redis Cluster of redis-server processes a test owns, with
// replicas, so that killing a master makes its replica take over.
type Cluster struct {
	Nodes []*Server // masters first, then replicas, as redis-cli assigns them
}

// StartCluster starts masters masters with replicas replicas each (node
// timeout 1s, so a failover takes a few seconds) and waits until the
// cluster is ready. It skips or fails as StartServer does.
func StartCluster(t testing.TB, masters, replicas int) *Cluster {
	t.Helper()
	return StartClusterWith(t, ClusterOptions{Masters: masters, Replicas: replicas})
}

// ClusterOptions describes a cluster for StartClusterWith.
type ClusterOptions struct {
	Masters, Replicas int
	// Proxied puts a fault proxy (Server.Proxy) in front of each node,
	// which the node announces as its address: every connection of a
	// cluster client goes through one, while the nodes reach each other
	// directly on the cluster bus and by MIGRATE. Replicas connect to
	// their master's announced address, through its proxy, whose faults
	// spare that link (faultproxy's Exempt).
	Proxied bool
	// NodeTimeout is cluster-node-timeout: how long a master may be
	// unreachable before its replica takes over (default one second).
	NodeTimeout time.Duration
}

// StartClusterWith starts the cluster opt describes, as StartCluster does.
func StartClusterWith(t testing.TB, opt ClusterOptions) *Cluster {
	t.Helper()
	masters, replicas := opt.Masters, opt.Replicas
	if _, err := exec.LookPath("redis-cli"); err != nil {
		if os.Getenv("CHATQ_REQUIRE_REDIS") == "1" {
			t.Fatal("CHATQ_REQUIRE_REDIS=1 but redis-cli is not installed")
		}
		t.Skip("redis-cli not installed")
	}
	c := &Cluster{}
	addrs := []string{"--cluster", "create"}
	for range masters * (1 + replicas) {
		requireServer(t)
		port := freePort(t)
		timeout := opt.NodeTimeout
		if timeout <= 0 {
			timeout = time.Second
		}
		args := []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.FormatInt(timeout.Milliseconds(), 10), "--cluster-replica-validity-factor", "0"}
		var proxy *faultproxy.Proxy
		if opt.Proxied {
			p, err := faultproxy.StartOn(fmt.Sprintf("127.0.0.1:%d", freePort(t)), fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				t.Fatalf("fault proxy: %v", err)
			}
			t.Cleanup(func() { _ = p.Close() })
			p.Exempt("REPLCONF", "PSYNC")
			_, pport, _ := net.SplitHostPort(p.Addr())
			args = append(args, "--cluster-announce-port", pport, "--cluster-announce-bus-port", strconv.Itoa(port+10000))
			proxy = p
		}
		s := startServer(t, port, args...)
		s.Proxy = proxy
		c.Nodes = append(c.Nodes, s)
		addrs = append(addrs, s.Addr())
	}
	addrs = append(addrs, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command("redis-cli", addrs...).CombinedOutput(); err != nil {
		t.Fatalf("redis-cli --cluster create: %v\n%s", err, out)
	}
	c.WaitHealthy(t)
	return c
}

// URL is a --cluster seed URL naming every node (its proxy, when it has
// one).
func (c *Cluster) URL() string {
	u := "redis://" + c.Nodes[0].announced()
	for i, s := range c.Nodes[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + s.announced()
	}
	return u
}

// WaitHealthy waits until every live node says the cluster is ok and every
// slot is served.
func (c *Cluster) WaitHealthy(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, s := range c.Nodes {
		if s.cmd == nil {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
		for {
			info, err := cl.ClusterInfo(t.Context()).Result()
			if err == nil && strings.Contains(info, "cluster_state:ok") && strings.Contains(info, "cluster_slots_ok:16384") {
				break
			}
			if time.Now().After(deadline) {
				cl.Close()
				t.Fatalf("cluster not healthy on %s: %v %s", s.Addr(), err, info)
			}
			time.Sleep(50 * time.Millisecond)
		}
		cl.Close()
	}
}

// MasterOf returns the node that serves key's slot now.
func (c *Cluster) MasterOf(t testing.TB, key string) *Server {
	t.Helper()
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{c.Nodes[0].Addr()}})
	defer cc.Close()
	var addr string
	slot, err := cc.ClusterKeySlot(t.Context(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	slots, err := cc.ClusterSlots(t.Context()).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range slots {
		if int64(r.Start) <= slot && slot <= int64(r.End) {
			addr = r.Nodes[0].Addr
		}
	}
	if s := c.byAddr(addr); s != nil {
		return s
	}
	t.Fatalf("no node serves %q (slot %d, %s)", key, slot, addr)
	return nil
}

// WaitReplicated waits until every replica of every live master has all of
// its master's writes, so that a failover loses nothing acknowledged.
func (c *Cluster) WaitReplicated(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, s := range c.Nodes {
		if s.cmd == nil {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: s.Addr(), MaxRetries: -1})
		for !replicated(t, cl) {
			if time.Now().After(deadline) {
				cl.Close()
				t.Fatalf("replicas of %s did not catch up", s.Addr())
			}
			time.Sleep(20 * time.Millisecond)
		}
		cl.Close()
	}
}

// replicated reports whether cl is a replica, or a master whose replicas (if
// any) are all online at its replication offset.
func replicated(t testing.TB, cl *redis.Client) bool {
	info, err := cl.Info(t.Context(), "replication").Result()
	if err != nil {
		return false
	}
	if strings.Contains(info, "role:slave") {
		return true
	}
	var offset string
	var replicas []string
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "master_repl_offset:"); ok {
			offset = v
		}
		if strings.HasPrefix(line, "slave") && strings.Contains(line, "state=") {
			replicas = append(replicas, line)
		}
	}
	for _, r := range replicas {
		if !strings.Contains(r, "state=online") || !strings.Contains(r, "offset="+offset+",") {
			return false
		}
	}
	return true
}

// Sentinel is a master, its replica and one redis-sentinel (quorum 1)
// watching them under the name Master, all owned by the test.
type Sentinel struct {
	Master, Replica *Server
	Name            string
	Addr            string // the sentinel's host:port
	tls             *tls.Config
}

// StartSentinel starts a master, a replica and a sentinel, and waits until
// the sentinel knows the replica. It skips or fails as StartServer does.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	return StartSentinelTLS(t, nil)
}

// StartSentinelTLS is StartSentinel with every server and the sentinel
// speaking only TLS with files (plain TCP when files is nil), replication
// and the sentinel's own connections included.
func StartSentinelTLS(t testing.TB, files *TLSFiles) *Sentinel {
	t.Helper()
	if _, err := exec.LookPath("redis-sentinel"); err != nil {
		if os.Getenv("CHATQ_REQUIRE_REDIS") == "1" {
			t.Fatal("CHATQ_REQUIRE_REDIS=1 but redis-sentinel is not installed")
		}
		t.Skip("redis-sentinel not installed")
	}
	requireServer(t)
	m := startServerTLS(t, freePort(t), files)
	r := startServerTLS(t, freePort(t), files, "--replicaof", "127.0.0.1", strconv.Itoa(m.Port))
	s := &Sentinel{Master: m, Replica: r, Name: "chatqtest", tls: m.tls}
	port := freePort(t)
	dir := t.TempDir()
	conf := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nsentinel monitor %s 127.0.0.1 %d 1\n"+
		"sentinel down-after-milliseconds %s 1000\nsentinel failover-timeout %s 5000\n",
		port, dir, s.Name, m.Port, s.Name, s.Name)
	if files != nil {
		conf += fmt.Sprintf("port 0\ntls-port %d\ntls-cert-file %s\ntls-key-file %s\ntls-ca-cert-file %s\n"+
			"tls-auth-clients no\ntls-replication yes\n", port, files.Cert, files.Key, files.CA)
	}
	if err := os.WriteFile(dir+"/sentinel.conf", []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("redis-sentinel", dir+"/sentinel.conf", "--logfile", dir+"/sentinel.log")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	s.Addr = "127.0.0.1:" + strconv.Itoa(port)
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, TLSConfig: s.tls})
	defer sc.Close()
	deadline := time.Now().Add(60 * time.Second)
	for {
		rs, err := sc.Replicas(t.Context(), s.Name).Result()
		if err == nil && len(rs) > 0 {
			return s
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(dir + "/sentinel.log")
			t.Fatalf("the sentinel found no replica: %v\n%s", err, log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Failover makes the sentinel promote the replica and waits until it
// reports the new master.
func (s *Sentinel) Failover(t testing.TB) {
	t.Helper()
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, TLSConfig: s.tls})
	defer sc.Close()
	mc := redis.NewClient(&redis.Options{Addr: s.Master.Addr(), TLSConfig: s.tls})
	defer mc.Close()
	deadline := time.Now().Add(60 * time.Second)
	// Everything written so far reaches the replica first.
	for {
		n, err := mc.Do(t.Context(), "WAIT", 1, 1000).Int()
		if err == nil && n >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica did not catch up: %v", err)
		}
	}
	for {
		err := sc.Failover(t.Context(), s.Name).Err()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("SENTINEL FAILOVER: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for {
		addr, err := sc.GetMasterAddrByName(t.Context(), s.Name).Result()
		if err == nil && len(addr) == 2 && addr[1] == strconv.Itoa(s.Replica.Port) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sentinel did not promote the replica: %v %v", addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
