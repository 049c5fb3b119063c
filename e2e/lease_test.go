package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// The job each `chatq queue work` runs: it takes an exclusive lock named by
// the message id on fd 9 (held by this shell alone: its one external child,
// sleep, gets fd 9 closed), so a second delivery that starts while this one
// runs finds the lock taken and records an overlap. The body is the job's
// length in seconds.
const leaseJob = `exec 9>>"$LOCKS/$CHATQ_MESSAGE_ID"
if ! flock -n 9; then echo "$CHATQ_MESSAGE_ID" >> "$OUT/overlaps"; exit 99; fi
read -r secs
echo "$CHATQ_MESSAGE_ID $CHATQ_RECEIVE_COUNT" >> "$OUT/started"
sleep "$secs" 9>&-
echo "$CHATQ_MESSAGE_ID" >> "$OUT/done"
`

// TestWorkLeasesUnderKills is the guarantee docs/queue.md states for queue
// work, on the real server: 8 worker processes (--vt 1s) handle jobs both
// shorter and longer than the vt while a random worker is SIGKILLed (and
// replaced) every 300-900ms. Every message must be handled to the end at
// least once, the queue must end empty (nothing lost), and no message may
// be handled by two jobs at once (the lock above). A killed worker's job
// dies with it (Linux's parent-death signal), so this checks the stronger
// form; the guarantee itself only speaks of live workers.
//
// Run alone: CHATQ_TEST_REDIS_URL=redis://... go test -run TestWorkLeasesUnderKills -v .
func TestWorkLeasesUnderKills(t *testing.T) {
	b := redistest.Real(t)
	if _, err := exec.LookPath("flock"); err != nil {
		if os.Getenv("CHATQ_REQUIRE_REDIS") == "1" {
			t.Fatal("CHATQ_REQUIRE_REDIS=1 but flock(1) (util-linux) is not installed")
		}
		t.Skip("needs flock(1) (util-linux)")
	}
	chatq, err := exec.LookPath("chatq") // the test binary, installed by testscript.Main
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	locks, out := filepath.Join(dir, "locks"), filepath.Join(dir, "out")
	for _, d := range []string{locks, out} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	job := filepath.Join(dir, "job.sh")
	if err := os.WriteFile(job, []byte(leaseJob), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	q := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
	if err := q.Create(ctx, "jobs", delayq.Attributes{}); err != nil {
		t.Fatal(err)
	}
	// 120 jobs: 60 of 0.05-0.8s, 60 of 1.2-2.5s, under a 1s vt.
	const total = 120
	ids := map[string]bool{}
	for i := 0; i < total; i++ {
		secs := 0.05 + rand.Float64()*0.75
		if i%2 == 1 {
			secs = 1.2 + rand.Float64()*1.3
		}
		p, err := q.Push(ctx, "jobs", fmt.Sprintf("%.2f", secs), delayq.PushOptions{})
		if err != nil {
			t.Fatal(err)
		}
		ids[p.ID] = true
	}

	var mu sync.Mutex
	outcomes := map[string]int{} // by kind, from the workers' JSON Lines
	var readers sync.WaitGroup
	start := func() *exec.Cmd {
		cmd := exec.Command(chatq, "queue", "work", "jobs", "--vt", "1s", "-o", "json", "--", "sh", job)
		cmd.Env = append(os.Environ(), "CHATQ_URL="+b.URL, "CHATQ_PREFIX="+b.Prefix, "LOCKS="+locks, "OUT="+out)
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				var o struct {
					Acked  bool   `json:"acked"`
					Killed string `json:"killed"`
					Error  string `json:"error"`
				}
				if json.Unmarshal(sc.Bytes(), &o) != nil {
					continue
				}
				kind := "acked"
				switch {
				case o.Killed != "":
					kind = o.Killed
				case strings.Contains(o.Error, "stale receipt"):
					kind = "stale ack"
				case !o.Acked:
					kind = "failed: " + o.Error
				}
				mu.Lock()
				outcomes[kind]++
				mu.Unlock()
			}
		}()
		return cmd
	}
	workers := make([]*exec.Cmd, 8)
	for i := range workers {
		workers[i] = start()
	}
	lines := func(name string) []string {
		data, _ := os.ReadFile(filepath.Join(out, name))
		return strings.Fields(string(data))
	}
	kills := 0
	began := time.Now()
	for deadline := time.Now().Add(5 * time.Minute); ; {
		if time.Now().After(deadline) {
			t.Fatalf("not done after 5 minutes: %d of %d handled", len(lines("done")), total)
		}
		if len(lines("overlaps")) > 0 {
			break // reported below
		}
		done := map[string]bool{}
		for _, id := range lines("done") {
			done[id] = true
		}
		if len(done) == total {
			if s, err := q.Stats(ctx, "jobs"); err == nil && s.Messages == 0 {
				break
			}
		}
		time.Sleep(time.Duration(300+rand.IntN(600)) * time.Millisecond)
		if len(done) < total*9/10 { // kill while most of the work is left
			i := rand.IntN(len(workers))
			_ = workers[i].Process.Signal(syscall.SIGKILL)
			_ = workers[i].Wait()
			kills++
			workers[i] = start()
		}
	}
	took := time.Since(began)
	for _, w := range workers {
		_ = w.Process.Signal(syscall.SIGTERM)
		_ = w.Wait()
	}
	readers.Wait()

	handled := map[string]int{}
	for _, id := range lines("done") {
		handled[id]++
	}
	twice := 0
	if ov := lines("overlaps"); len(ov) > 0 {
		t.Fatalf("%d deliveries started while another job of the same message ran: %v", len(ov), ov)
	}
	for id := range ids {
		if handled[id] == 0 {
			t.Errorf("message %s never handled", id)
		}
		if handled[id] > 1 {
			twice++
		}
	}
	starts := len(lines("started")) / 2
	if s, err := q.Stats(ctx, "jobs"); err != nil || s.Messages != 0 {
		t.Errorf("queue not empty: %+v %v", s, err)
	}
	t.Logf("%d messages, 8 workers, vt 1s, jobs 0.05-0.8s and 1.2-2.5s: %v, %d workers SIGKILLed, %d job starts, "+
		"%d messages handled to the end more than once, 0 overlaps; outcomes reported by live workers: %v",
		total, took.Round(time.Second), kills, starts, twice, outcomes)
}
