package queue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type queueWorkOptions struct {
	f           *cmdutil.Factory
	cmd         *cobra.Command
	queue       string
	argv        []string
	concurrency int
	vt          time.Duration
}

func newQueueWorkCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueWorkOptions{f: f}
	cmd := &cobra.Command{
		Use:   "work QUEUE [--concurrency N] [--vt DUR] -- CMD [ARG...]",
		Short: "Run a command for each message: body on stdin, ack on exit 0",
		Long: `Receive messages as they become due and run CMD once per message, up to
--concurrency at a time. The message body is CMD's stdin; its environment
adds CHATQ_QUEUE, CHATQ_MESSAGE_ID, CHATQ_RECEIVE_COUNT (1 on the first
receive) and CHATQ_MESSAGE_SENT (Unix ms). Exit 0 acks the message; any
other outcome leaves it to come back after the visibility timeout (so give
a --vt longer than CMD takes).

Each outcome is reported on stderr, or with -o json as one JSON Lines object
on stdout: {"id","rc","exit_code","acked","duration_ms","error"}; CMD's own
stdout then goes to stderr, keeping stdout JSON only.

On SIGINT or SIGTERM work stops taking messages, waits for the running
commands and exits 0. (A Ctrl-C on a terminal also reaches the commands, as
they share its process group; SIGTERM to chatq alone lets them finish.)`,
		Example: `  chatq queue work jobs -- ./handle-job.sh
  chatq queue work emails --concurrency 4 --vt 5m -o json -- python3 send.py
  chatq queue work jobs -- sh -c 'echo "$CHATQ_MESSAGE_ID: $(cat)"'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return cmdutil.UsageErrorf("want a queue and a command: chatq queue work QUEUE -- CMD [ARG...]")
			}
			if dash := cmd.ArgsLenAtDash(); dash != -1 && dash != 1 {
				return cmdutil.UsageErrorf("put the command after the queue name and --: chatq queue work QUEUE -- CMD [ARG...]")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue, opts.argv = cmd, args[0], args[1:]
			return queueWorkRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().IntVar(&opts.concurrency, "concurrency", 1, "run up to N commands at once")
	cmd.Flags().DurationVar(&opts.vt, "vt", 0, "visibility timeout (default: the queue's)")
	return cmd
}

type workOutcomeJSON struct {
	ID         string `json:"id"`
	RC         int64  `json:"rc"`
	ExitCode   int    `json:"exit_code"`
	Acked      bool   `json:"acked"`
	DurationMs int64  `json:"duration_ms"`
	Error      string `json:"error,omitempty"`
}

// lockedWriter serializes writes from concurrent commands.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func queueWorkRun(ctx context.Context, opts *queueWorkOptions) error {
	f := opts.f
	if opts.concurrency < 1 {
		return cmdutil.UsageErrorf("invalid --concurrency %d: must be at least 1", opts.concurrency)
	}
	wo := delayq.WorkOptions{Concurrency: opts.concurrency}
	if opts.cmd.Flags().Changed("vt") {
		if err := checkFlagDuration("vt", opts.vt, false); err != nil {
			return err
		}
		wo.VT, wo.HasVT = opts.vt, true
	}
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	path, err := exec.LookPath(opts.argv[0])
	if err != nil {
		return cmdutil.WithHint(fmt.Errorf("command %q: %w", opts.argv[0], err), "give a program on $PATH or a path to one; use sh -c '...' for shell code")
	}
	q, err := queueClient(f, opts.cmd)
	if err != nil {
		return err
	}
	var mu sync.Mutex
	stdout, stderr := io.Writer(lockedWriter{&mu, f.IO.Out}), io.Writer(lockedWriter{&mu, f.IO.ErrOut})
	if f.JSON() {
		stdout = stderr
	}
	wo.Report = func(o delayq.Outcome) {
		out := workOutcomeJSON{ID: o.Message.ID, RC: o.Message.RC, Acked: o.Err == nil && o.AckErr == nil,
			DurationMs: o.Duration.Milliseconds()}
		var ee *exec.ExitError
		switch {
		case o.Err == nil:
		case errors.As(o.Err, &ee):
			out.ExitCode = ee.ExitCode()
			out.Error = o.Err.Error()
		default:
			out.ExitCode = -1
			out.Error = o.Err.Error()
		}
		if o.AckErr != nil {
			out.Error = "ack: " + o.AckErr.Error()
		}
		mu.Lock()
		defer mu.Unlock()
		if f.JSON() {
			_ = cmdutil.WriteJSONLine(f.IO.Out, out)
			return
		}
		verdict := "acked"
		if !out.Acked {
			verdict = "left for retry: " + out.Error
		}
		f.IO.Infof("%s rc=%d exit %d, %s (%dms)", out.ID, out.RC, out.ExitCode, verdict, out.DurationMs)
	}
	env := os.Environ()
	err = q.Work(ctx, opts.queue, wo, func(ctx context.Context, m delayq.Message) error {
		c := exec.Command(path, opts.argv[1:]...)
		c.Stdin = strings.NewReader(m.Body)
		c.Stdout, c.Stderr = stdout, stderr
		c.Env = append(env[:len(env):len(env)],
			"CHATQ_QUEUE="+opts.queue,
			"CHATQ_MESSAGE_ID="+m.ID,
			"CHATQ_RECEIVE_COUNT="+strconv.FormatInt(m.RC, 10),
			"CHATQ_MESSAGE_SENT="+strconv.FormatInt(m.Sent.UnixMilli(), 10))
		return c.Run()
	})
	if err != nil {
		return queueErr(err)
	}
	if ctx.Err() != nil {
		f.IO.Infof("stopped: no running commands left")
	}
	return nil
}
