package exporter

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/exposition"
	"github.com/chatq-dev/chatq/internal/cli/snapshot"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/shardlist"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"
)

var limits = snapshot.Limits{Queues: 100, Lists: 10, Chats: 10, ScanCalls: 1 << 20, RegistryCalls: 10, ScanCount: 500}

// parse reads the text format as Prometheus's own parser does.
func parse(t *testing.T, fams []exposition.Family) map[string]*dto.MetricFamily {
	t.Helper()
	var buf bytes.Buffer
	if err := exposition.Write(&buf, fams, exposition.Text); err != nil {
		t.Fatal(err)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(&buf)
	if err != nil {
		t.Fatalf("%v in:\n%s", err, buf.String())
	}
	return mfs
}

// value returns the value of the series of name with the labels given as
// name, value pairs (the series' own may have more), and whether there is
// one.
func value(mfs map[string]*dto.MetricFamily, name string, labels ...string) (float64, bool) {
	mf := mfs[name]
	if mf == nil {
		return 0, false
	}
next:
	for _, m := range mf.Metric {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, l := range m.Label {
				found = found || l.GetName() == labels[i] && l.GetValue() == labels[i+1]
			}
			if !found {
				continue next
			}
		}
		if m.Counter != nil {
			return m.Counter.GetValue(), true
		}
		return m.Gauge.GetValue(), true
	}
	return 0, false
}

// The metrics of a scrape are the numbers of the queues, lists and chats.
func TestScrape(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		q := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
		must := func(err error) {
			t.Helper()
			if err != nil {
				t.Fatal(err)
			}
		}
		must(q.Create(ctx, "dead", delayq.Attributes{}))
		must(q.Create(ctx, "jobs", delayq.Attributes{MaxReceives: 1, DeadLetter: "dead"}))
		for i := range 4 {
			opt := delayq.PushOptions{}
			if i == 3 {
				opt.Delay = time.Hour
			}
			_, err := q.Push(ctx, "jobs", "m", opt)
			must(err)
		}
		_, err := q.Receive(ctx, "jobs", delayq.ReceiveOptions{VT: time.Hour})
		must(err)
		_, err = shardlist.New(b.Client, shardlist.Options{Prefix: b.Prefix}).RPush(ctx, `ev"1\`, "a", "b", "c")
		must(err)
		hi := "hi"
		_, err = chat.New(b.Client, chat.Options{Prefix: b.Prefix}).Create(ctx, chat.CreateRequest{From: "a", To: []string{"b"}, Message: &hi})
		must(err)

		e := New(b.Client, Options{Snapshot: snapshot.Options{Prefix: b.Prefix, Limits: limits, DeadLetters: true}})
		fams, err := e.Scrape(ctx)
		must(err)
		mfs := parse(t, fams)
		for _, c := range []struct {
			name   string
			labels []string
			want   float64
		}{
			{mUp, nil, 1},
			{mQueueMessages, []string{"queue", "jobs", "state", "ready"}, 2},
			{mQueueMessages, []string{"queue", "jobs", "state", "delayed"}, 1},
			{mQueueMessages, []string{"queue", "jobs", "state", "inflight"}, 1},
			{mSent, []string{"queue", "jobs"}, 4},
			{mReceived, []string{"queue", "jobs"}, 1},
			{mDeadLettered, []string{"queue", "jobs"}, 0},
			{mDeadLetter, []string{"queue", "jobs", "dead_letter", "dead"}, 0},
			{mListItems, []string{"list", `ev"1\`}, 3},
			{mListShards, []string{"list", `ev"1\`}, 1},
			{mChatMessages, nil, 1},
			{mDiscovered, []string{"kind", "queue"}, 2},
			{mDiscovered, []string{"kind", "chat"}, 1},
			{mCapped, []string{"kind", "queue"}, 0},
			{mComplete, []string{"kind", "list"}, 1},
		} {
			if got, ok := value(mfs, c.name, c.labels...); !ok || got != c.want {
				t.Errorf("%s%v = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
			}
		}
		if v, ok := value(mfs, mOldestReady, "queue", "jobs"); !ok || v < 0 || v > 60 {
			t.Errorf("oldest ready age %v", v)
		}
		if v, _ := value(mfs, mScrapeTrips); v < 5 {
			t.Errorf("%v round trips", v)
		}

		// A cap: one queue read of two.
		lim := limits
		lim.Queues = 1
		e = New(b.Client, Options{Snapshot: snapshot.Options{Prefix: b.Prefix, Limits: lim, DeadLetters: true}})
		fams, err = e.Scrape(ctx)
		must(err)
		mfs = parse(t, fams)
		if v, _ := value(mfs, mCapped, "kind", "queue"); v != 1 {
			t.Errorf("capped = %v, want 1", v)
		}
		if v, _ := value(mfs, mExamined, "kind", "queue"); v != 1 {
			t.Errorf("examined = %v, want 1", v)
		}
	})
}

// While the server is away a served scrape answers chatq_up 0, and the
// exporter says so once; when it is back, chatq_up is 1 again and it says
// that too. Check at start returns nothing for a server that is away.
func TestUpWhileServerAway(t *testing.T) {
	b, proxy := redistest.Proxied(t, redistest.Embedded(t))
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond,
		DialTimeout: 200 * time.Millisecond, MaxRetries: -1, ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	var mu sync.Mutex
	var said []string
	e := New(rdb, Options{Snapshot: snapshot.Options{Prefix: b.Prefix, Limits: limits},
		Infof: func(format string, a ...any) {
			mu.Lock()
			defer mu.Unlock()
			said = append(said, fmt.Sprintf(format, a...))
		}})
	ctx := t.Context()
	up := func() float64 {
		fams, _ := e.watched(ctx) // as /metrics scrapes
		v, _ := value(parse(t, fams), mUp)
		return v
	}
	if up() != 1 {
		t.Fatal("up 0 with the server there")
	}
	proxy.Blackhole(true)
	proxy.CutAll()
	for range 2 {
		if v := up(); v != 0 {
			t.Fatalf("up %v with the server away", v)
		}
	}
	if err := e.Check(ctx); err != nil {
		t.Errorf("Check with the server away: %v", err)
	}
	proxy.Blackhole(false)
	if v := up(); v != 1 {
		t.Fatalf("up %v after the server came back", v)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(said) != 2 || !strings.Contains(said[0], "lost the connection") || !strings.Contains(said[1], "reconnected after") {
		t.Errorf("said %q", said)
	}
}

// /metrics answers in the format asked for; / is a page that names it;
// other paths and methods are refused.
func TestServeMetrics(t *testing.T) {
	b := redistest.Embedded(t)
	e := New(b.Client, Options{Snapshot: snapshot.Options{Prefix: b.Prefix, Limits: limits}})
	url := serve(t, e)
	get := func(path, accept string) (*http.Response, string) {
		req, _ := http.NewRequest("GET", url+path, nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, string(body)
	}
	resp, body := get("/metrics", "")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/plain; version=0.0.4; charset=utf-8" || !strings.Contains(body, "\nchatq_up 1\n") {
		t.Errorf("text: %d %q\n%s", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
	resp, body = get("/metrics", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5")
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/openmetrics-text; version=1.0.0") || !strings.HasSuffix(body, "# EOF\n") {
		t.Errorf("OpenMetrics: %q\n%s", resp.Header.Get("Content-Type"), body)
	}
	if resp, body = get("/", ""); resp.StatusCode != 200 || !strings.Contains(body, "/metrics") {
		t.Errorf("/: %d %s", resp.StatusCode, body)
	}
	if resp, _ = get("/other", ""); resp.StatusCode != 404 {
		t.Errorf("/other: %d", resp.StatusCode)
	}
	// The body is closed, or the open connection keeps Serve from
	// stopping until its grace period (5s) ends.
	if resp, err := http.Post(url+"/metrics", "text/plain", nil); err != nil || resp.StatusCode != 405 {
		t.Errorf("POST: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// Scrapes at once all answer (sharing one read of the server).
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if resp, body := get("/metrics", ""); resp.StatusCode != 200 || !strings.Contains(body, "chatq_up 1") {
				t.Errorf("concurrent scrape: %d\n%s", resp.StatusCode, body)
			}
		})
	}
	wg.Wait()
}

// A scrape ends within the timeout Prometheus gives, with chatq_up 0 when
// the server is slower than that.
func TestScrapeTimeout(t *testing.T) {
	b, proxy := redistest.Proxied(t, redistest.Embedded(t))
	// As chatq's own client: deadlines of contexts apply.
	rdb := redis.NewClient(&redis.Options{Addr: proxy.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { rdb.Close() })
	e := New(rdb, Options{Snapshot: snapshot.Options{Prefix: b.Prefix, Limits: limits}})
	url := serve(t, e)
	proxy.Latency(time.Second)
	req, _ := http.NewRequest("GET", url+"/metrics", nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "0.2")
	start := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "\nchatq_up 0\n") {
		t.Errorf("a slow server: %s", body)
	}
	if took := time.Since(start); took > 900*time.Millisecond {
		t.Errorf("the scrape took %s, past a latency of 1s: the timeout was not applied", took)
	}
}

// Serve stops when its context ends, and closes the listener.
func TestServeStops(t *testing.T) {
	b := redistest.Embedded(t)
	e := New(b.Client, Options{Snapshot: snapshot.Options{Prefix: b.Prefix, Limits: limits}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- e.Serve(ctx, ln) }()
	resp, err := http.Get("http://" + ln.Addr().String() + "/metrics")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("%v %v", resp, err)
	}
	resp.Body.Close()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if _, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		t.Error("still listening after Serve returned")
	}
}
