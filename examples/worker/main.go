// Command worker is an example of a Go program that consumes a chatq queue
// (RSMQ's layout, through github.com/chatq-dev/chatq/pkg/delayq), with
// end-to-end tests that drive chatq from txtar scripts through
// github.com/chatq-dev/chatq/chatqtest: see worker_test.go and
// testdata/script.
//
// It handles "resize N" jobs, acks each job it has done, leaves any other
// job unacked (it comes back after the visibility timeout), and exits when
// no job is due. It reaches the server as chatq does: CHATQ_URL, and
// CHATQ_PREFIX in front of every key, which is how each test script gets a
// server of its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/redis/go-redis/v9"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole program, so that the tests can run it as a command.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	queue := fs.String("queue", "jobs", "the queue to consume")
	vt := fs.Duration("vt", time.Minute, "how long a received job stays hidden before it is retried")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	url := os.Getenv("CHATQ_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		fmt.Fprintf(stderr, "worker: CHATQ_URL: %v\n", err)
		return 2
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	q := delayq.New(rdb, delayq.Options{Prefix: os.Getenv("CHATQ_PREFIX")})
	if err := drain(context.Background(), q, *queue, *vt, stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "worker: %v\n", err)
		return 1
	}
	return 0
}

// drain handles the due jobs of queue until none is left.
func drain(ctx context.Context, q *delayq.Client, queue string, vt time.Duration, stdout, stderr io.Writer) error {
	for {
		opt := delayq.ReceiveOptions{N: 10, VT: vt}
		if vt == 0 {
			opt.VT = -1 // hidden for 0s (0 would mean the queue's vt)
		}
		msgs, err := q.Receive(ctx, queue, opt)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return nil
		}
		for _, m := range msgs {
			if err := handle(m.Body, stdout); err != nil {
				fmt.Fprintf(stderr, "worker: job %s: %v (left for a retry)\n", m.ID, err)
				continue
			}
			if _, err := q.Ack(ctx, queue, m.ID); err != nil {
				return err
			}
		}
	}
}

// handle does one job.
func handle(body string, stdout io.Writer) error {
	image, ok := strings.CutPrefix(body, "resize ")
	if !ok {
		return errors.New("unknown job " + fmt.Sprintf("%q", body))
	}
	_, err := fmt.Fprintf(stdout, "resized %s\n", image)
	return err
}
