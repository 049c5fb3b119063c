package metrics_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/cmd"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/cli/webconfig/testcerts"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"golang.org/x/crypto/bcrypt"
)

// tool returns the path of a Prometheus program, skipping t when it is not
// installed, or failing it with CHATQ_REQUIRE_PROMETHEUS=1 (CI installs
// Debian's prometheus package).
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CHATQ_REQUIRE_PROMETHEUS") == "1" {
			t.Fatalf("CHATQ_REQUIRE_PROMETHEUS=1 but %s is not installed", name)
		}
		t.Skipf("%s not installed (apt-get install prometheus)", name)
	}
	return p
}

// backend is the real server when CHATQ_TEST_REDIS_URL names one, else an
// embedded one.
func backend(t *testing.T) redistest.Backend {
	if os.Getenv("CHATQ_TEST_REDIS_URL") != "" {
		return redistest.Real(t)
	}
	return redistest.Embedded(t)
}

// freeAddr is a loopback address to listen on: in CHATQ_TEST_PORTS=LO-HI
// when set (a machine shared with other runs), else one the system picks.
func freeAddr(t *testing.T) string {
	t.Helper()
	lo, hi, ok := strings.Cut(os.Getenv("CHATQ_TEST_PORTS"), "-")
	if !ok {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		return ln.Addr().String()
	}
	l, _ := strconv.Atoi(lo)
	h, _ := strconv.Atoi(hi)
	for range 100 {
		addr := fmt.Sprintf("127.0.0.1:%d", l+rand.IntN(h-l+1))
		if ln, err := net.Listen("tcp", addr); err == nil {
			ln.Close()
			return addr
		}
	}
	t.Fatalf("no free port in CHATQ_TEST_PORTS=%s", os.Getenv("CHATQ_TEST_PORTS"))
	return ""
}

// chatq runs a chatq command line in process against b.
func chatq(t *testing.T, b redistest.Backend, args ...string) string {
	t.Helper()
	var out, errOut bytes.Buffer
	io := &iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
	if code := cmd.Run(t.Context(), append([]string{"--url", b.URL, "--prefix", b.Prefix}, args...), io, func(string) string { return "" }); code != 0 {
		t.Fatalf("chatq %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
	}
	return out.String()
}

// TestPrometheusScrapes starts a real Prometheus that scrapes `chatq
// metrics --listen` (in OpenMetrics, which Prometheus asks for) and checks
// through Prometheus's HTTP API that the gauges and counters equal what
// `chatq queue stats` says, before and after pushes, receives and a
// dead-letter move.
func TestPrometheusScrapes(t *testing.T) {
	t.Parallel()
	prom := tool(t, "prometheus")
	b := backend(t)
	ctx := t.Context()
	q := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
	if err := q.Create(ctx, "jobs-dead", delayq.Attributes{}); err != nil {
		t.Fatal(err)
	}
	if err := q.Create(ctx, "jobs", delayq.Attributes{VT: time.Hour, MaxReceives: 1, DeadLetter: "jobs-dead"}); err != nil {
		t.Fatal(err)
	}

	target := listen(t, b)

	// Prometheus, scraping it four times a second.
	api := prometheus(t, prom, fmt.Sprintf(`
  - job_name: chatq
    static_configs:
      - targets: [%q]
`, target.Host))

	// An empty queue first: every series is there, at 0.
	want := func() map[string]float64 {
		m := map[string]float64{`chatq_up`: 1, `up{job="chatq"}`: 1}
		for _, name := range []string{"jobs", "jobs-dead"} {
			var st struct {
				Ready, Delayed, Inflight        float64
				TotalSent, TotalRecv, TotalDead float64
				Msgs                            float64
			}
			out := chatq(t, b, "-o", "json", "queue", "stats", name)
			var raw map[string]any
			if err := json.Unmarshal([]byte(out), &raw); err != nil {
				t.Fatal(err)
			}
			st.Ready, st.Delayed, st.Inflight = raw["ready"].(float64), raw["delayed"].(float64), raw["inflight"].(float64)
			st.TotalSent, st.TotalRecv, st.TotalDead, st.Msgs = raw["totalsent"].(float64), raw["totalrecv"].(float64), raw["totaldead"].(float64), raw["msgs"].(float64)
			sel := fmt.Sprintf(`{queue=%q`, name)
			m[`chatq_queue_messages`+sel+`,state="ready"}`] = st.Ready
			m[`chatq_queue_messages`+sel+`,state="delayed"}`] = st.Delayed
			m[`chatq_queue_messages`+sel+`,state="inflight"}`] = st.Inflight
			m[`chatq_queue_messages_sent_total`+sel+`}`] = st.TotalSent
			m[`chatq_queue_messages_received_total`+sel+`}`] = st.TotalRecv
			m[`chatq_queue_messages_dead_lettered_total`+sel+`}`] = st.TotalDead
			if name == "jobs-dead" {
				m[`chatq_queue_dead_letter_messages{queue="jobs",dead_letter="jobs-dead"}`] = st.Msgs
			}
		}
		return m
	}
	first := want()
	waitFor(t, api, first)

	// Pushes, receives and a dead-letter move: a message received once
	// (its limit), due again, moves on the next receive.
	if _, err := q.Push(ctx, "jobs", "poison", delayq.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Receive(ctx, "jobs", delayq.ReceiveOptions{VT: -1}); err != nil {
		t.Fatal(err)
	}
	for i := range 7 {
		opt := delayq.PushOptions{}
		if i >= 5 {
			opt.Delay = time.Hour
		}
		if _, err := q.Push(ctx, "jobs", fmt.Sprintf("m%d", i), opt); err != nil {
			t.Fatal(err)
		}
	}
	moved := 0
	if _, err := q.Receive(ctx, "jobs", delayq.ReceiveOptions{N: 2, Moved: func(n int, _ string) { moved += n }}); err != nil || moved != 1 {
		t.Fatalf("receive: %v, moved %d", err, moved)
	}
	second := want()
	if second[`chatq_queue_messages{queue="jobs",state="inflight"}`] != 2 || second[`chatq_queue_messages_dead_lettered_total{queue="jobs"}`] != 1 ||
		second[`chatq_queue_dead_letter_messages{queue="jobs",dead_letter="jobs-dead"}`] != 1 {
		t.Fatalf("queue stats after the receives: %v", second)
	}
	waitFor(t, api, second)
}

// listen runs chatq metrics --listen against b, in process, until the test
// ends, and returns the URL it prints.
func listen(t *testing.T, b redistest.Backend, args ...string) *url.URL {
	t.Helper()
	mctx, stop := context.WithCancel(t.Context())
	outR, outW := io.Pipe()
	var errOut bytes.Buffer
	done := make(chan int, 1)
	args = append([]string{"--url", b.URL, "--prefix", b.Prefix, "metrics", "--listen", freeAddr(t), "--max-chats", "0", "--max-lists", "0"}, args...)
	go func() {
		io := &iostreams.IOStreams{In: strings.NewReader(""), Out: outW, ErrOut: &errOut}
		done <- cmd.Run(mctx, args, io, func(string) string { return "" })
		outW.Close()
	}()
	line, err := bufio.NewReader(outR).ReadString('\n')
	if err != nil {
		t.Fatalf("chatq metrics --listen printed no URL: %v; stderr: %s", err, errOut.String())
	}
	go io.Copy(io.Discard, outR)
	target, err := url.Parse(strings.TrimSpace(line))
	if err != nil || target.Path != "/metrics" {
		t.Fatalf("URL %q: %v", line, err)
	}
	t.Cleanup(func() {
		stop()
		if code := <-done; code != 0 {
			t.Errorf("chatq metrics --listen exited %d after its context ended: %s", code, errOut.String())
		}
	})
	return target
}

// prometheus runs Prometheus at path prom with the scrape configs jobs
// (YAML list items) until the test ends, scraping four times a second, and
// returns the URL of its API.
func prometheus(t *testing.T, prom, jobs string) string {
	t.Helper()
	dir := t.TempDir()
	config := `global:
  scrape_interval: 250ms
  scrape_timeout: 200ms
scrape_configs:` + jobs
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	api := "http://" + freeAddr(t)
	var promLog bytes.Buffer
	p := exec.Command(prom, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+strings.TrimPrefix(api, "http://"), "--log.level=warn")
	p.Stdout, p.Stderr = &promLog, &promLog
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Process.Kill()
		p.Wait()
		if t.Failed() {
			t.Logf("prometheus's log:\n%s", promLog.String())
		}
	})
	return api
}

// Prometheus scrapes chatq metrics --web-config over TLS with basic auth,
// as its scrape_config says (scheme: https, tls_config, basic_auth); a job
// with a wrong password, and one without TLS, are not served.
func TestPrometheusScrapesTLS(t *testing.T) {
	t.Parallel()
	prom := tool(t, "prometheus")
	b := backend(t)
	certs := testcerts.New(t)
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(certs.Dir, "web.yml")
	if err := os.WriteFile(web, []byte("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"+
		"basic_auth_users:\n  prometheus: '"+string(hash)+"'\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := listen(t, b, "--web-config", web)
	if target.Scheme != "https" {
		t.Fatalf("chatq printed %s, want https", target)
	}
	job := func(name, scheme, password string) string {
		return fmt.Sprintf(`
  - job_name: %s
    scheme: %s
    tls_config:
      ca_file: %q
    basic_auth:
      username: prometheus
      password: %q
    static_configs:
      - targets: [%q]
`, name, scheme, certs.CA, password, target.Host)
	}
	api := prometheus(t, prom, job("chatq", "https", "s3cret")+job("wrong", "https", "wrong")+job("plain", "http", "s3cret"))
	waitFor(t, api, map[string]float64{`up{job="chatq"}`: 1, `chatq_up{job="chatq"}`: 1, `up{job="wrong"}`: 0, `up{job="plain"}`: 0})
}

// waitFor polls Prometheus's query API until each series of want has its
// value, or fails t after a deadline.
func waitFor(t *testing.T, api string, want map[string]float64) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for {
		ok := true
		for sel, v := range want {
			got, err := query(api, sel)
			if err != nil || got != v {
				ok, last = false, fmt.Sprintf("%s = %v (%v), want %v", sel, got, err, v)
				break
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus never agreed with queue stats: %s", last)
		}
		time.Sleep(100 * time.Millisecond) // polling an outside process: no event to wait on
	}
}

// query returns the value of the one series sel selects now.
func query(api, sel string) (float64, error) {
	resp, err := http.Get(api + "/api/v1/query?query=" + url.QueryEscape(sel))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var r struct {
		Status string
		Data   struct {
			Result []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, err
	}
	if r.Status != "success" || len(r.Data.Result) != 1 {
		return 0, fmt.Errorf("%s: %d series", r.Status, len(r.Data.Result))
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	return strconv.ParseFloat(s, 64)
}

// promtool check metrics accepts what chatq metrics prints, in both
// formats' text form (it lints names, types, help and units).
func TestPromtoolChecksMetrics(t *testing.T) {
	t.Parallel()
	promtool := tool(t, "promtool")
	b := backend(t)
	ctx := t.Context()
	q := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
	if err := q.Create(ctx, "jobs-dead", delayq.Attributes{}); err != nil {
		t.Fatal(err)
	}
	if err := q.Create(ctx, "jobs", delayq.Attributes{MaxReceives: 2, DeadLetter: "jobs-dead"}); err != nil {
		t.Fatal(err)
	}
	chatq(t, b, "list", "rpush", `k"1\`, "a")
	chatq(t, b, "chat", "create", "--from", "joe", "--to", "jeff", "hi")
	out := chatq(t, b, "metrics", "--scan-calls", "100000")
	c := exec.Command(promtool, "check", "metrics")
	c.Stdin = strings.NewReader(out)
	if msg, err := c.CombinedOutput(); err != nil || len(bytes.TrimSpace(msg)) != 0 {
		t.Errorf("promtool check metrics: %v\n%s\non:\n%s", err, msg, out)
	}
}

// The alert rules pass promtool's checks and their unit tests.
func TestAlertRules(t *testing.T) {
	t.Parallel()
	promtool := tool(t, "promtool")
	for _, args := range [][]string{{"check", "rules", "chatq-rules.yml"}, {"test", "rules", "chatq-rules_test.yml"}} {
		c := exec.Command(promtool, args...)
		c.Dir = "../../monitoring"
		if msg, err := c.CombinedOutput(); err != nil {
			t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, msg)
		}
	}
}

// docs/metrics.md shows the rules file as it is, and names every metric.
func TestDocs(t *testing.T) {
	rules, err := os.ReadFile("../../monitoring/chatq-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("../../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```yaml\n"+string(rules)+"```\n") {
		t.Error("docs/metrics.md does not show monitoring/chatq-rules.yml as it is (in a yaml code block)")
	}
	b := redistest.Embedded(t)
	chatq(t, b, "queue", "create", "q")
	var fams []struct{ Name string }
	if err := json.Unmarshal([]byte(chatq(t, b, "-o", "json", "metrics")), &fams); err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if !strings.Contains(string(doc), "`"+f.Name+"`") {
			t.Errorf("docs/metrics.md does not name %s", f.Name)
		}
	}
}
