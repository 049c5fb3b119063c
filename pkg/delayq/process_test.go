package delayq_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/redis/go-redis/v9"
)

// TestHelperProcess is a consumer process for the tests below, run as this
// test binary with DELAYQ_HELPER set; otherwise it does nothing.
//
//	consume-pop: pop until the queue is empty, printing each body
//	consume-vt:  receive with a 200ms vt and ack, except on the first
//	             receive of every 100th message; until the queue is empty
//	hold:        receive one message, print "id rc now-ms", then hang
func TestHelperProcess(t *testing.T) {
	mode := os.Getenv("DELAYQ_HELPER")
	if mode == "" {
		return
	}
	opt, err := redis.ParseURL(os.Getenv("DELAYQ_URL"))
	if err != nil {
		fatal(err)
	}
	rdb := redis.NewClient(opt)
	c := delayq.New(rdb, delayq.Options{Prefix: os.Getenv("DELAYQ_PREFIX")})
	ctx := context.Background()
	out := bufio.NewWriter(os.Stdout)
	switch mode {
	case "hold":
		r, err := c.Receive(ctx, "q", delayq.ReceiveOptions{Wait: 10 * time.Second})
		if err != nil || len(r) != 1 {
			fatal(fmt.Errorf("hold: %v %v", r, err))
		}
		fmt.Printf("%s %d %d\n", r[0].ID, r[0].RC, r[0].Now.UnixMilli())
		select {} // mid-message, until killed
	case "consume-pop", "consume-vt":
		ro := delayq.ReceiveOptions{Pop: true, N: 5}
		if mode == "consume-vt" {
			ro = delayq.ReceiveOptions{VT: 200 * time.Millisecond, N: 5, Wait: 300 * time.Millisecond}
		}
		for {
			r, err := c.Receive(ctx, "q", ro)
			if err != nil {
				fatal(err)
			}
			if len(r) == 0 {
				s, err := c.Stats(ctx, "q")
				if err != nil {
					fatal(err)
				}
				if s.Messages == 0 {
					break
				}
				continue
			}
			var ack []string
			for _, m := range r {
				fmt.Fprintln(out, m.Body)
				if !(m.RC == 1 && atoi(m.Body)%100 == 47) {
					ack = append(ack, m.ID)
				}
			}
			if !ro.Pop {
				if _, err := c.Ack(ctx, "q", ack...); err != nil {
					fatal(err)
				}
			}
		}
	}
	out.Flush()
	os.Exit(0)
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "helper:", err)
	os.Exit(1)
}

func helper(t *testing.T, b redistest.Backend, mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$")
	cmd.Env = append(os.Environ(), "DELAYQ_HELPER="+mode, "DELAYQ_URL="+b.URL, "DELAYQ_PREFIX="+b.Prefix)
	cmd.Stderr = os.Stderr
	return cmd
}

// Eight consumer processes: exactly once with pop, at least once (every
// message acked in the end, none lost) with a visibility timeout.
func TestConsumerProcesses(t *testing.T) {
	t.Parallel()
	redistest.SlowOnEmbedded(t, "8 consumer processes × 2,000 messages, twice: ~7 s of CPU")
	for _, mode := range []string{"pop", "vt"} {
		t.Run(mode, func(t *testing.T) {
			redistest.Run(t, func(t *testing.T, b redistest.Backend) {
				c := newClient(t, b)
				mustCreate(t, c, "q", delayq.Attributes{})
				const total = 2000
				pushMany(t, c, "q", total)
				var mu sync.Mutex
				counts := map[string]int{}
				var wg sync.WaitGroup
				for i := 0; i < 8; i++ {
					cmd := helper(t, b, "consume-"+mode)
					stdout, err := cmd.StdoutPipe()
					if err != nil {
						t.Fatal(err)
					}
					if err := cmd.Start(); err != nil {
						t.Fatal(err)
					}
					wg.Add(1)
					go func() {
						defer wg.Done()
						sc := bufio.NewScanner(stdout)
						for sc.Scan() {
							mu.Lock()
							counts[sc.Text()]++
							mu.Unlock()
						}
						if err := cmd.Wait(); err != nil {
							t.Errorf("consumer: %v", err)
						}
					}()
				}
				wg.Wait()
				if mode == "pop" {
					checkCounts(t, counts, total, true)
					if s, err := c.Stats(context.Background(), "q"); err != nil || s.Messages != 0 || s.TotalRecv != total {
						t.Fatalf("after: %+v %v", s, err)
					}
				} else {
					checkRedelivered(t, c, counts, total)
				}
			})
		})
	}
}

// A consumer killed with SIGKILL mid-message: the message comes back after
// the visibility timeout with its receive count incremented, and after
// max-receives it moves to the dead-letter queue.
func TestKilledConsumer(t *testing.T) {
	t.Parallel()
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		c := newClient(t, b)
		mustCreate(t, c, "dead", delayq.Attributes{})
		mustCreate(t, c, "q", delayq.Attributes{VT: time.Second, MaxReceives: 2, DeadLetter: "dead"})
		id := mustPush(t, c, "q", "work", delayq.PushOptions{})
		var firstAt int64
		for rc := 1; rc <= 2; rc++ {
			cmd := helper(t, b, "hold")
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, err := bufio.NewReader(stdout).ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			var gotID string
			var gotRC, at int64
			if _, err := fmt.Sscan(line, &gotID, &gotRC, &at); err != nil || gotID != id || gotRC != int64(rc) {
				t.Fatalf("consumer got %q, want %s with rc %d", line, id, rc)
			}
			if rc == 1 {
				firstAt = at
			} else if at-firstAt < 1000 {
				t.Fatalf("received again %dms after the first receive, before the 1s vt ended", at-firstAt)
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			// Still there (in flight, or due again if this test is slow).
			s, err := c.Stats(ctx, "q")
			if err != nil || s.Messages != 1 {
				t.Fatalf("after kill %d: %+v %v", rc, s, err)
			}
		}
		// The third receive would exceed max-receives: the message moves.
		r, moved, _, err := receiveEvents(ctx, c, "q", delayq.ReceiveOptions{Wait: 10 * time.Second})
		if err != nil || moved != 1 || len(r) != 0 {
			t.Fatalf("third receive: %+v %v", r, err)
		}
		r, err = c.Receive(ctx, "dead", delayq.ReceiveOptions{Pop: true})
		if err != nil || len(r) != 1 || r[0].ID != id || r[0].Body != "work" {
			t.Fatalf("dead letter: %+v %v", r, err)
		}
		if s, _ := c.Stats(ctx, "q"); s.Messages != 0 || s.TotalRecv != 2 {
			t.Fatalf("source after: %+v", s)
		}
	})
}
