package delayq_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// rsmqDir holds the rsmq npm client (npm ci there installs it).
var rsmqDir = filepath.Join("..", "..", "testdata", "interop", "rsmq")

// rsmqClient runs operations of the real rsmq npm client (0.12.4) through
// testdata/interop/rsmq/interop.js.
type rsmqClient struct {
	t   *testing.T
	url string
	ns  string
}

type rsmqResult struct {
	OK  json.RawMessage `json:"ok"`
	Err string          `json:"err"`
}

type op struct {
	Name string
	Opts map[string]any
}

func (r *rsmqClient) run(ops ...op) []rsmqResult {
	r.t.Helper()
	list := make([][]any, len(ops))
	for i, o := range ops {
		list[i] = []any{o.Name, o.Opts}
	}
	arg, _ := json.Marshal(list)
	cmd := exec.Command("node", "interop.js", r.url, r.ns, string(arg))
	cmd.Dir = rsmqDir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("node interop.js: %v", err)
	}
	var res []rsmqResult
	if err := json.Unmarshal(out, &res); err != nil || len(res) != len(ops) {
		r.t.Fatalf("node interop.js printed %s: %v", out, err)
	}
	return res
}

func (r *rsmqClient) one(name string, opts map[string]any, into any) string {
	r.t.Helper()
	res := r.run(op{name, opts})[0]
	if res.Err == "" && into != nil {
		if err := json.Unmarshal(res.OK, into); err != nil {
			r.t.Fatalf("%s: %s: %v", name, res.OK, err)
		}
	}
	return res.Err
}

type rsmqMessage struct {
	ID      string  `json:"id"`
	Message string  `json:"message"`
	RC      int64   `json:"rc"`
	FR      int64   `json:"fr"`
	Sent    float64 `json:"sent"`
}

type rsmqAttributes struct {
	VT         int64 `json:"vt"`
	Delay      int64 `json:"delay"`
	MaxSize    int   `json:"maxsize"`
	TotalRecv  int64 `json:"totalrecv"`
	TotalSent  int64 `json:"totalsent"`
	Msgs       int64 `json:"msgs"`
	HiddenMsgs int64 `json:"hiddenmsgs"`
}

// needRSMQ returns the npm client for backend b, skipping when node or
// node_modules is missing, unless CHATQ_REQUIRE_REDIS=1 (as in CI), which
// makes that a failure.
func needRSMQ(t *testing.T, b redistest.Backend) *rsmqClient {
	t.Helper()
	missing := ""
	if _, err := exec.LookPath("node"); err != nil {
		missing = "node is not installed"
	} else if _, err := os.Stat(filepath.Join(rsmqDir, "node_modules", "rsmq")); err != nil {
		missing = "rsmq is not installed: run npm ci in testdata/interop/rsmq"
	}
	if missing != "" {
		if os.Getenv("CHATQ_REQUIRE_REDIS") == "1" {
			t.Fatalf("CHATQ_REQUIRE_REDIS=1 but %s", missing)
		}
		t.Skip(missing)
	}
	// rsmq's namespace: our keys are Prefix + "rsmq:", its are ns + ":".
	return &rsmqClient{t: t, url: b.URL, ns: b.Prefix + "rsmq"}
}

// TestInteropRSMQ checks chatq against the real rsmq npm client on a real
// Redis: each reads and writes the other's queues and messages.
func TestInteropRSMQ(t *testing.T) {
	b := redistest.Real(t)
	rs := needRSMQ(t, b)
	ctx := context.Background()
	c := newClient(t, b)

	t.Run("chatq to rsmq", func(t *testing.T) {
		rs.t = t
		mustCreate(t, c, "fromgo", delayq.Attributes{VT: 45 * time.Second, MaxSize: 1024})
		var qs []string
		if rs.one("listQueues", nil, &qs); !contains(qs, "fromgo") {
			t.Fatalf("rsmq lists %v", qs)
		}
		var attrs rsmqAttributes
		if err := rs.one("getQueueAttributes", map[string]any{"qname": "fromgo"}, &attrs); err != "" || attrs.VT != 45 || attrs.MaxSize != 1024 {
			t.Fatalf("rsmq attributes %+v %s", attrs, err)
		}
		now := mustPush(t, c, "fromgo", "hello from chatq ☃", delayq.PushOptions{})
		at := time.Now().Add(1500 * time.Millisecond)
		later, err := c.Push(ctx, "fromgo", "scheduled", delayq.PushOptions{At: at})
		if err != nil {
			t.Fatal(err)
		}
		var m rsmqMessage
		if err := rs.one("receiveMessage", map[string]any{"qname": "fromgo"}, &m); err != "" || m.ID != now || m.Message != "hello from chatq ☃" || m.RC != 1 {
			t.Fatalf("rsmq received %+v %s", m, err)
		}
		// rsmq reads the push time from chatq's id as it does from its own.
		if d := time.Duration(m.Sent*1e6) - time.Duration(sentAt(now).UnixNano()); d < -time.Microsecond || d > time.Microsecond {
			t.Fatalf("rsmq sent %v, chatq %v", m.Sent, sentAt(now))
		}
		// The --at message reaches rsmq, and not before its time.
		m = rsmqMessage{}
		if err := rs.one("receiveUntil", map[string]any{"qname": "fromgo", "timeout": 10000}, &m); err != "" || m.ID != later.ID {
			t.Fatalf("rsmq received %+v %s, want the scheduled message", m, err)
		}
		if m.FR < later.VisibleAt.UnixMilli() {
			t.Fatalf("rsmq received at %d, before %d", m.FR, later.VisibleAt.UnixMilli())
		}
		// rsmq deletes what it received; chatq's counts agree.
		var n int
		if rs.one("deleteMessage", map[string]any{"qname": "fromgo", "id": now}, &n); n != 1 {
			t.Fatalf("rsmq deleteMessage = %d", n)
		}
		// rsmq's receives left chatq's index behind: stats says so, and
		// is exact again after Reindex.
		s, _ := c.Stats(ctx, "fromgo")
		if s.SplitExact || s.Messages != 1 {
			t.Fatalf("chatq stats after rsmq, before reindex: %+v", s)
		}
		if err := c.Reindex(ctx, "fromgo"); err != nil {
			t.Fatal(err)
		}
		s, _ = c.Stats(ctx, "fromgo")
		if s.Messages != 1 || s.InFlight != 1 || s.TotalRecv != 2 || s.TotalSent != 2 || !s.SplitExact {
			t.Fatalf("chatq stats after rsmq: %+v", s)
		}
		// maxsize counts UTF-16 units on both sides: 512 emoji fit 1024.
		fits, over := strings.Repeat("😀", 512), strings.Repeat("😀", 512)+"x"
		mustPush(t, c, "fromgo", fits, delayq.PushOptions{})
		if _, err := c.Push(ctx, "fromgo", over, delayq.PushOptions{}); !errors.Is(err, delayq.ErrMessageTooLong) {
			t.Fatalf("chatq push over maxsize: %v", err)
		}
		res := rs.run(op{"sendMessage", map[string]any{"qname": "fromgo", "message": fits}}, op{"sendMessage", map[string]any{"qname": "fromgo", "message": over}})
		if res[0].Err != "" || res[1].Err != "messageTooLong" {
			t.Fatalf("rsmq maxsize: %+v", res)
		}
		// The dead-letter policy's extra fields do not bother rsmq; rsmq
		// pops what chatq pushed.
		mustCreate(t, c, "fromgo-dead", delayq.Attributes{})
		if err := c.SetAttributes(ctx, "fromgo", delayq.Attributes{MaxReceives: 2, DeadLetter: "fromgo-dead"}); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Purge(ctx, "fromgo", -1); err != nil {
			t.Fatal(err)
		}
		id := mustPush(t, c, "fromgo", "pop me", delayq.PushOptions{})
		attrs = rsmqAttributes{}
		m = rsmqMessage{}
		res = rs.run(op{"getQueueAttributes", map[string]any{"qname": "fromgo"}}, op{"popMessage", map[string]any{"qname": "fromgo"}})
		json.Unmarshal(res[0].OK, &attrs)
		json.Unmarshal(res[1].OK, &m)
		if attrs.VT != 45 || attrs.Msgs != 1 || m.ID != id || m.Message != "pop me" {
			t.Fatalf("rsmq with the policy set: %+v %+v %+v", attrs, m, res)
		}
		// rsmq deletes chatq's queue.
		if err := rs.one("deleteQueue", map[string]any{"qname": "fromgo"}, nil); err != "" {
			t.Fatal(err)
		}
		if _, err := c.Stats(ctx, "fromgo"); !errors.Is(err, delayq.ErrQueueNotFound) {
			t.Fatalf("chatq stats of a queue rsmq deleted: %v", err)
		}
	})

	t.Run("rsmq to chatq", func(t *testing.T) {
		rs.t = t
		res := rs.run(
			op{"createQueue", map[string]any{"qname": "fromnode", "vt": 60, "maxsize": 2048}},
			op{"sendMessage", map[string]any{"qname": "fromnode", "message": "one"}},
			op{"sendMessage", map[string]any{"qname": "fromnode", "message": "two"}},
			op{"sendMessage", map[string]any{"qname": "fromnode", "message": "later", "delay": 3600}},
			op{"sendMessage", map[string]any{"qname": "fromnode", "message": "retried"}},
			op{"receiveMessage", map[string]any{"qname": "fromnode", "vt": 3600}},
		)
		for _, r := range res {
			if r.Err != "" {
				t.Fatalf("rsmq: %+v", res)
			}
		}
		var first rsmqMessage
		json.Unmarshal(res[5].OK, &first)
		if qs, _ := listQueues(ctx, c); !contains(qs, "fromnode") {
			t.Fatalf("chatq lists %v", qs)
		}
		// rsmq created the queue and received from it: chatq's index of
		// received messages is incomplete until Reindex.
		s, err := c.Stats(ctx, "fromnode")
		if err != nil || s.SplitExact || s.Messages != 4 || s.Ready != 2 {
			t.Fatalf("chatq stats of rsmq's queue before reindex: %+v %v", s, err)
		}
		if err := c.Reindex(ctx, "fromnode"); err != nil {
			t.Fatal(err)
		}
		s, err = c.Stats(ctx, "fromnode")
		if err != nil || s.VT != time.Minute || s.MaxSize != 2048 || s.Messages != 4 || s.Ready != 2 || s.Delayed != 1 || s.InFlight != 1 || !s.SplitExact {
			t.Fatalf("chatq stats of rsmq's queue: %+v %v", s, err)
		}
		// rsmq makes its received message visible again; chatq receives
		// it with rc 2 and rsmq's first-receive time.
		if err := rs.one("changeMessageVisibility", map[string]any{"qname": "fromnode", "id": first.ID, "vt": 0}, nil); err != "" {
			t.Fatal(err)
		}
		r, err := c.Receive(ctx, "fromnode", delayq.ReceiveOptions{N: 10})
		if err != nil || len(r) != 3 {
			t.Fatalf("chatq received %+v %v", r, err)
		}
		var ids []string
		for _, m := range r {
			ids = append(ids, m.ID)
			if m.ID == first.ID {
				if m.RC != 2 || m.FR.UnixMilli() != first.FR || m.Body != first.Message {
					t.Fatalf("redelivered %+v, rsmq's first receive %+v", m, first)
				}
			} else if m.RC != 1 || !idRE.MatchString(m.ID) {
				t.Fatalf("chatq received %+v", m)
			}
		}
		if _, err := c.Ack(ctx, "fromnode", ids...); err != nil {
			t.Fatal(err)
		}
		var attrs rsmqAttributes
		if err := rs.one("getQueueAttributes", map[string]any{"qname": "fromnode"}, &attrs); err != "" || attrs.Msgs != 1 || attrs.HiddenMsgs != 1 || attrs.TotalRecv != 4 || attrs.TotalSent != 4 {
			t.Fatalf("rsmq attributes after chatq: %+v %s", attrs, err)
		}
		// A chatq receive waiting on the queue is woken by rsmq's realtime
		// PUBLISH.
		done := make(chan []delayq.Message, 1)
		go func() {
			r, _ := c.Receive(ctx, "fromnode", delayq.ReceiveOptions{Wait: time.Minute, Pop: true})
			done <- r
		}()
		rs.one("sendMessage", map[string]any{"qname": "fromnode", "message": "wake up"}, nil)
		select {
		case r := <-done:
			if r == nil || len(r) != 1 || r[0].Body != "wake up" {
				t.Fatalf("woken with %+v", r)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("rsmq's send did not wake chatq's waiting receive")
		}
		// chatq deletes rsmq's queue; rsmq sees it gone.
		if _, err := c.Delete(ctx, "fromnode", -1); err != nil {
			t.Fatal(err)
		}
		if err := rs.one("getQueueAttributes", map[string]any{"qname": "fromnode"}, nil); err != "queueNotFound" {
			t.Fatalf("rsmq after chatq deleted the queue: %q", err)
		}
	})
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestInteropImport: messages chatq imported (own ids, due times, receive
// counts) are received by the rsmq npm client as if it had stored them.
func TestInteropImport(t *testing.T) {
	b := redistest.Real(t)
	rs := needRSMQ(t, b)
	c := newClient(t, b)
	mustCreate(t, c, "imported", delayq.Attributes{VT: 60 * time.Second})
	src := newClient(t, b)
	mustCreate(t, src, "orig", delayq.Attributes{})
	ready := mustPush(t, src, "orig", "ready\nbody ☃", delayq.PushOptions{})
	mustPush(t, src, "orig", "later", delayq.PushOptions{Delay: time.Hour})
	got, _ := exportAll(t, src, "orig")
	msgs := toImport(got)
	// As if received twice before the backup, first at fr, and due again
	// 2 s ago (rsmq's hiddenmsgs compares with whole seconds: a message due
	// less than a second ago counts as hidden there).
	fr := time.Now().Add(-time.Minute).Truncate(time.Millisecond)
	for i := range msgs {
		if msgs[i].ID == ready {
			msgs[i].RC, msgs[i].FR, msgs[i].VisibleAt = 2, fr, time.Now().Add(-2*time.Second)
		}
	}
	if r := importAll(t, c, "imported", msgs); r.Imported != 2 {
		t.Fatalf("import: %+v", r)
	}
	var attrs rsmqAttributes
	if err := rs.one("getQueueAttributes", map[string]any{"qname": "imported"}, &attrs); err != "" || attrs.Msgs != 2 || attrs.HiddenMsgs != 1 || attrs.TotalSent != 2 {
		t.Fatalf("rsmq attributes of the imported queue: %+v %s", attrs, err)
	}
	var m rsmqMessage
	if err := rs.one("receiveMessage", map[string]any{"qname": "imported"}, &m); err != "" || m.ID != ready || m.Message != "ready\nbody ☃" || m.RC != 3 || m.FR != fr.UnixMilli() {
		t.Fatalf("rsmq received %+v %s, want id %s, rc 3, fr %d", m, err, ready, fr.UnixMilli())
	}
	m = rsmqMessage{}
	if err := rs.one("receiveMessage", map[string]any{"qname": "imported"}, &m); err != "" || m.ID != "" {
		t.Fatalf("rsmq received the delayed message before its due time: %+v %s", m, err)
	}
	var n int
	if rs.one("deleteMessage", map[string]any{"qname": "imported", "id": ready}, &n); n != 1 {
		t.Fatalf("rsmq deleteMessage = %d", n)
	}
}
