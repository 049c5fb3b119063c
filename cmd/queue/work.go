package queue

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type workOptions struct {
	cmdutil.Output
	Client     func() (*delayq.Client, error)
	Persistent func(giveUpAfter time.Duration) *conn.Persistent
	Queue      string
	Argv       []string // CMD [ARG...]
	// Env is what CMD's environment adds to chatq's: the connection
	// settings (handlerConnEnv).
	Env         []string
	Concurrency int
	VT          *time.Duration // --vt, if given
	JobTimeout  *time.Duration // --job-timeout, if given
	GiveUpAfter time.Duration
	UntilEmpty  bool
	MaxJobs     *int // --max-jobs, if given
}

// NewCmdWork returns `chatq queue work` (runF: see cmdutil.RunWith).
func NewCmdWork(f *cmdutil.Factory, runF func(context.Context, *workOptions) error) *cobra.Command {
	opts := &workOptions{}
	var vt, jobTimeout time.Duration
	var maxJobs int
	cmd := &cobra.Command{
		Use:   "work QUEUE [--concurrency N] [--vt DUR] [--job-timeout DUR] [--until-empty] [--max-jobs N] -- CMD [ARG...]",
		Short: "Run a command for each message: body on stdin, ack on exit 0",
		Long: `Receive messages as they become due and run CMD once per message, up to
--concurrency at a time. The message body is CMD's stdin. Exit 0 acks the
message, by its receipt; any other outcome leaves it to come back when its
visibility timeout ends. Messages are received in batches (one for the
free slots, and while CMDs are quick a few more held ahead, their leases
renewed while they wait) and acked in batches.

Leases: while CMD runs, work renews its message's visibility timeout every
third of the vt (--vt, default the queue's), so a CMD may run longer than
the vt and no other consumer receives the message meanwhile. Should work
fail to renew (the server unreachable for most of a vt, or the message
taken from it), it kills CMD before the lease ends and reports "lease
lost". --job-timeout DUR kills a CMD that runs longer than DUR (SIGTERM,
SIGKILL 5s later); its message comes back as after any failure. CMD runs in
a process group of its own and the whole group is killed; on Linux it is
also killed if chatq dies.

CMD's environment adds CHATQ_QUEUE, CHATQ_MESSAGE_ID, CHATQ_RECEIPT (this
delivery), CHATQ_RECEIVE_COUNT (1 on the first receive), CHATQ_MESSAGE_SENT
(Unix ms), and the connection settings, so that CMD can run chatq against
the same queue: CHATQ_URL (without its password), CHATQ_PREFIX,
CHATQ_NAMESPACE and CHATQ_CLUSTER, and when set CHATQ_TLS, CHATQ_CACERT,
CHATQ_CERT, CHATQ_KEY (file names), CHATQ_INSECURE, CHATQ_SNI,
CHATQ_SENTINEL_MASTER, CHATQ_USER and CHATQ_DB. No password is added: CMD has one only if
chatq itself got it from its environment (CHATQ_PASSWORD, REDISCLI_AUTH) or
CMD reads the same config file.

Each outcome is reported on stderr, or with -o json as one JSON Lines object
on stdout: {"id","rc","exit_code","acked","duration_ms","error","receipt",
"renewals","killed"} ("killed" is "job timeout" or "lease lost" when work
killed CMD); CMD's own stdout then goes to stderr, keeping stdout JSON only.
Messages a receive moved to the dead-letter queue are reported too (JSON:
{"dead_lettered":N,"to":"Q2"}), and a warning on stderr, once, when a
message received too often is delivered again because the queue's
dead-letter queue does not exist.

Server restarts and failovers: when the server stops answering, work says
so once on stderr, waits for its running commands (whose leases then
cannot be renewed: a job that outlives 5/6 of the vt without the server is
killed, as above), and reconnects with capped exponential backoff and
jitter, saying when it is back; nothing is acked twice or lost (acks are
by receipt). It gives up (exit 1) on errors retrying cannot fix (auth, ACL,
a missing queue), or after --give-up-after without the server.

On SIGINT or SIGTERM work stops taking messages, waits for the running
commands (renewing their leases; they get no signal from chatq, and a
terminal's Ctrl-C does not reach their process group) and exits 0.

For cron: --until-empty ends once no message is ready and its own commands
are done (it does not wait for delayed messages, or for failed ones to come
back); --max-jobs N ends after N messages, their commands done. A drain
ends with a summary on stderr (with -o json, a last line {"summary":{...}}):
jobs run, acked, failed, timed out, lease lost, and left in flight (not
acked: they come back when their visibility timeout ends). It exits 0 when
every job was acked, 6 when one failed or timed out, so that cron sees it.

A message that keeps failing comes back forever unless the queue has a
dead-letter policy: work warns once when a message it ran was received 10
times or more in a queue without one.`,
		Example: `  chatq queue work jobs -- ./handle-job.sh
  chatq queue work emails --concurrency 4 --vt 1m --job-timeout 10m -o json -- python3 send.py
  chatq queue work jobs -- sh -c 'echo "$CHATQ_MESSAGE_ID: $(cat)"'
  chatq queue work jobs -- sh -c 'handle || chatq queue retry "$CHATQ_QUEUE" "$CHATQ_RECEIPT" --delay 1m'

  # a cron drain: what is ready now, 4 at a time, then exit
  chatq queue work jobs --until-empty --concurrency 4 -- ./handle-job.sh`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 2 {
				return cmdutil.UsageErrorf("want a queue and a command: chatq queue work QUEUE -- CMD [ARG...]")
			}
			if dash := cmd.ArgsLenAtDash(); dash != -1 && dash != 1 {
				return cmdutil.UsageErrorf("put the command after the queue name and --: chatq queue work QUEUE -- CMD [ARG...]")
			}
			return nil
		},
		RunE: cmdutil.RunWith(f, opts, runF, workRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			fl := cmd.Flags()
			opts.Queue, opts.Argv = args[0], args[1:]
			opts.VT, opts.JobTimeout = given(fl, "vt", vt), given(fl, "job-timeout", jobTimeout)
			opts.MaxJobs = given(fl, "max-jobs", maxJobs)
			opts.Client, opts.Persistent = queueClient(f, cmd), f.Persistent
			nsFlag, _ := fl.GetString("namespace")
			ns, _ := conn.Namespace(nsFlag, f.Getenv) // a bad one fails opts.Client, before any CMD runs
			opts.Env = handlerConnEnv(f.Config(), ns)
			return nil, opts.validate()
		}),
	}
	cmd.Flags().IntVar(&opts.Concurrency, "concurrency", 1, "run up to N commands at once")
	cmd.Flags().DurationVar(&vt, "vt", 0, "visibility timeout, the lease renewed while CMD runs (default: the queue's)")
	cmd.Flags().DurationVar(&jobTimeout, "job-timeout", 0, "kill a CMD that runs longer than this (default: no limit)")
	cmd.Flags().DurationVar(&opts.GiveUpAfter, "give-up-after", 0, "exit 1 when the server has been unreachable this long (0: keep reconnecting)")
	cmd.Flags().BoolVar(&opts.UntilEmpty, "until-empty", false, "exit 0 once no message is ready and the commands started are done")
	cmd.Flags().IntVar(&maxJobs, "max-jobs", 0, "exit 0 after N messages, their commands done (default: no limit)")
	return cmdutil.MarkRead(cmd)
}

type workOutcomeJSON struct {
	ID         string `json:"id"`
	RC         int64  `json:"rc"`
	ExitCode   int    `json:"exit_code"`
	Acked      bool   `json:"acked"`
	DurationMs int64  `json:"duration_ms"`
	Error      string `json:"error,omitempty"`
	Receipt    string `json:"receipt"`
	Renewals   int    `json:"renewals"`
	Killed     string `json:"killed,omitempty"`
}

type workMovedJSON struct {
	DeadLettered int    `json:"dead_lettered"`
	To           string `json:"to"`
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

// cmdOutput is what CMD writes to for w: w itself when it is a file,
// else w under mu, written from a pipe.
func cmdOutput(mu *sync.Mutex, w io.Writer) io.Writer {
	if f, ok := w.(*os.File); ok {
		return f
	}
	return lockedWriter{mu, w}
}

// errJobTimeout is the cause a CMD past --job-timeout is stopped with.
var errJobTimeout = errors.New("job timeout")

// killGrace is how long a CMD past --job-timeout has between SIGTERM and
// SIGKILL. A lost lease kills at once: the message may be delivered again.
const killGrace = 5 * time.Second

// minWorkVT is the shortest lease work takes: renewals every third of it
// must be possible round trips.
const minWorkVT = 100 * time.Millisecond

func (o *workOptions) validate() error {
	if o.Concurrency < 1 {
		return cmdutil.UsageErrorf("invalid --concurrency %d: must be at least 1", o.Concurrency)
	}
	if o.VT != nil {
		if err := delayq.CheckDuration("--vt", *o.VT, time.Millisecond); err != nil {
			return err
		}
		if *o.VT < minWorkVT {
			return cmdutil.UsageErrorf("invalid --vt %s: work needs at least %s, as it renews the lease every third of it", *o.VT, minWorkVT)
		}
	}
	if o.JobTimeout != nil && *o.JobTimeout <= 0 {
		return cmdutil.UsageErrorf("invalid --job-timeout %s: must be positive", *o.JobTimeout)
	}
	if o.MaxJobs != nil && *o.MaxJobs < 1 {
		return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --max-jobs %d: must be at least 1", *o.MaxJobs),
			"leave it out for no limit; --until-empty stops when nothing is ready")
	}
	return checkName(o.Queue)
}

func workRun(ctx context.Context, opts *workOptions) error {
	wo := delayq.WorkOptions{Concurrency: opts.Concurrency, UntilEmpty: opts.UntilEmpty}
	if opts.VT != nil {
		wo.VT = *opts.VT
	}
	var jobTimeout time.Duration
	if opts.JobTimeout != nil {
		jobTimeout = *opts.JobTimeout
	}
	path, err := exec.LookPath(opts.Argv[0])
	if err != nil {
		return cmdutil.WithHint(fmt.Errorf("command %q: %w", opts.Argv[0], err), "give a program on $PATH or a path to one; use sh -c '...' for shell code")
	}
	q, err := opts.Client()
	if err != nil {
		return err
	}
	ios := opts.IO
	var mu sync.Mutex
	// CMD writes straight into chatq's stdout and stderr when they are
	// files, as under xargs: a pipe and a copying goroutine per job cost
	// more than the job's own fork. chatq's lines are one write(2) each,
	// which the kernel does not split on a pipe or an O_APPEND file.
	stdout, stderr := cmdOutput(&mu, ios.Out), cmdOutput(&mu, ios.ErrOut)
	if opts.JSON {
		stdout = stderr
	}
	var tally workSummary
	noPolicy := false
	if st, err := q.StatsEach(ctx, []string{opts.Queue}); err == nil && st[0].Err == nil {
		noPolicy = st[0].MaxReceives == 0
	}
	var warnedLoop sync.Once
	wo.Report = func(o delayq.Outcome) {
		tally.add(o)
		if noPolicy && !o.Acked && o.Message.RC >= loopWarnRC {
			warnedLoop.Do(func() {
				ios.Infof("warning: message %s of %s has been received %d times and keeps failing; the queue has no dead-letter policy, so it comes back forever", o.Message.ID, opts.Queue, o.Message.RC)
				ios.Infof("hint: chatq queue create %s-dead && chatq queue set %s --max-receives %d --dead-letter %s-dead", opts.Queue, opts.Queue, loopWarnRC, opts.Queue)
			})
		}
		out := workOutcomeJSON{ID: o.Message.ID, RC: o.Message.RC, Acked: o.Acked,
			DurationMs: o.Duration.Milliseconds(), Receipt: o.Message.Receipt, Renewals: o.Renewals}
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
		switch {
		case errors.Is(o.Err, errJobTimeout):
			out.Killed = "job timeout"
		case errors.Is(o.Err, delayq.ErrLeaseLost):
			out.Killed = "lease lost"
		}
		if o.AckErr != nil {
			out.Error = "ack: " + o.AckErr.Error()
		}
		mu.Lock()
		defer mu.Unlock()
		if opts.JSON {
			_ = iostreams.WriteJSONLine(ios.Out, out)
			return
		}
		verdict := "acked"
		if !out.Acked {
			verdict = "left for retry: " + out.Error
		}
		ios.Infof("%s rc=%d exit %d, %s (%dms)", out.ID, out.RC, out.ExitCode, verdict, out.DurationMs)
	}
	wo.Moved = func(n int, to string) {
		mu.Lock()
		defer mu.Unlock()
		if opts.JSON {
			_ = iostreams.WriteJSONLine(ios.Out, workMovedJSON{DeadLettered: n, To: to})
			return
		}
		ios.Infof("moved %s received too often to the dead-letter queue %s", plural(int64(n), "message"), to)
	}
	var warned sync.Once
	wo.DeadLetterMissing = func(dlq string) {
		// Once per run: the message comes back every vt, and so would the
		// warning.
		warned.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			ios.Infof("warning: the dead-letter queue %s of %s does not exist: a message received too often was delivered again instead of moved (see `chatq queue stats %s`)", dlq, opts.Queue, opts.Queue)
		})
	}
	env := append(os.Environ(), opts.Env...)
	p := opts.Persistent(opts.GiveUpAfter)
	wo.Received = p.Healthy
	run := func(ctx context.Context, m delayq.Message) error {
		c := exec.CommandContext(ctx, path, opts.Argv[1:]...)
		c.Stdin = strings.NewReader(m.Body)
		c.Stdout, c.Stderr = stdout, stderr
		c.Env = append(env[:len(env):len(env)],
			"CHATQ_QUEUE="+opts.Queue,
			"CHATQ_MESSAGE_ID="+m.ID,
			"CHATQ_RECEIPT="+m.Receipt,
			"CHATQ_RECEIVE_COUNT="+strconv.FormatInt(m.RC, 10),
			"CHATQ_MESSAGE_SENT="+strconv.FormatInt(m.Sent.UnixMilli(), 10))
		ownGroup(c)
		c.Cancel = func() error {
			if errors.Is(context.Cause(ctx), delayq.ErrLeaseLost) {
				return killGroup(c, true)
			}
			err := killGroup(c, false)
			time.AfterFunc(killGrace, func() { _ = killGroup(c, true) })
			return err
		}
		// Output pipes held open by a killed CMD's stray children.
		c.WaitDelay = killGrace + time.Second
		return c.Run()
	}
	// --job-timeout bounds the CMD's context; a CMD stopped past it fails
	// with errJobTimeout, and its message comes back.
	handle := func(ctx context.Context, m delayq.Message) error {
		if jobTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeoutCause(ctx, jobTimeout, fmt.Errorf("%w: ran longer than %s", errJobTimeout, jobTimeout))
			defer cancel()
		}
		err := run(ctx, m)
		if cause := context.Cause(ctx); err != nil && errors.Is(cause, errJobTimeout) {
			if errors.Is(err, context.DeadlineExceeded) {
				return cause // CMD exited 0 when told to stop
			}
			return fmt.Errorf("%w (handler: %v)", cause, err)
		}
		return err
	}
	// --max-jobs counts across reconnects: each Work takes what is left.
	var taken atomic.Int64
	counted := func(ctx context.Context, m delayq.Message) error {
		taken.Add(1)
		return handle(ctx, m)
	}
	err = p.Run(ctx, func(ctx context.Context) error {
		if opts.MaxJobs != nil {
			if wo.MaxJobs = *opts.MaxJobs - int(taken.Load()); wo.MaxJobs <= 0 {
				return nil
			}
		}
		return q.Work(ctx, opts.Queue, wo, counted)
	})
	if err != nil {
		return queueErr(err)
	}
	if ctx.Err() != nil {
		ios.Infof("stopped: no running commands left")
	}
	if !opts.UntilEmpty && opts.MaxJobs == nil {
		return nil
	}
	// A drain's caller (cron) learns what happened.
	mu.Lock()
	defer mu.Unlock()
	if opts.JSON {
		_ = iostreams.WriteJSONLine(ios.Out, struct {
			Summary workSummary `json:"summary"`
		}{tally})
	}
	ios.Infof("%s", tally.String())
	if tally.Failed+tally.TimedOut+tally.LeaseLost > 0 {
		return &drainError{tally, opts.Queue}
	}
	return nil
}

// loopWarnRC is the receive count past which work warns that a failing
// message in a queue without a dead-letter policy comes back forever.
const loopWarnRC = 10

// workSummary counts a drain's outcomes.
type workSummary struct {
	Jobs      int `json:"jobs"`
	Acked     int `json:"acked"`
	Failed    int `json:"failed"`
	TimedOut  int `json:"timed_out"`
	LeaseLost int `json:"lease_lost"`
	// LeftInFlight are the jobs not acked: received, they come back when
	// their visibility timeout ends.
	LeftInFlight int `json:"left_inflight"`
}

func (s *workSummary) add(o delayq.Outcome) {
	s.Jobs++
	switch {
	case o.Acked:
		s.Acked++
		return
	case errors.Is(o.Err, errJobTimeout):
		s.TimedOut++
	case errors.Is(o.Err, delayq.ErrLeaseLost):
		s.LeaseLost++
	default:
		s.Failed++ // CMD failed, or its ack did
	}
	s.LeftInFlight++
}

func (s workSummary) String() string {
	return fmt.Sprintf("drained %s: %d acked, %d failed, %d timed out, %d lease lost; %d left in flight (they come back after their visibility timeout)",
		plural(int64(s.Jobs), "job"), s.Acked, s.Failed, s.TimedOut, s.LeaseLost, s.LeftInFlight)
}

// drainError is a drain whose jobs did not all succeed: exit 6.
type drainError struct {
	s     workSummary
	queue string
}

func (e *drainError) Error() string {
	return fmt.Sprintf("%d of %s not acked (%d failed, %d timed out, %d lease lost)",
		e.s.LeftInFlight, plural(int64(e.s.Jobs), "job"), e.s.Failed, e.s.TimedOut, e.s.LeaseLost)
}
func (e *drainError) JobsFailed() bool { return true }
func (e *drainError) Hint() string {
	return fmt.Sprintf("see the outcomes above; `chatq queue peek %s --state inflight` shows them until they come back", e.queue)
}

// handlerConnEnv is the connection settings a handler needs to run chatq
// against the same queue (in namespace ns), with no secret: the URL loses
// its password.
func handlerConnEnv(cfg *conn.Config, ns string) []string {
	env := []string{
		"CHATQ_URL=" + withoutPassword(cfg.URL),
		"CHATQ_PREFIX=" + cfg.Prefix,
		"CHATQ_NAMESPACE=" + ns,
		"CHATQ_CLUSTER=" + strconv.FormatBool(cfg.Cluster),
	}
	// TLS, Sentinel and credential settings, when set: file names (made
	// absolute, in case CMD changes directory), never a password.
	add := func(key, value string) {
		if value != "" {
			env = append(env, key+"="+value)
		}
	}
	abs := func(path string) string {
		if a, err := filepath.Abs(path); err == nil && path != "" {
			return a
		}
		return path
	}
	if cfg.TLS {
		add("CHATQ_TLS", "true")
	}
	add("CHATQ_CACERT", abs(cfg.CACert))
	add("CHATQ_CERT", abs(cfg.Cert))
	add("CHATQ_KEY", abs(cfg.Key))
	if cfg.Insecure {
		add("CHATQ_INSECURE", "true")
	}
	add("CHATQ_SNI", cfg.SNI)
	add("CHATQ_SENTINEL_MASTER", cfg.SentinelMaster)
	add("CHATQ_USER", cfg.User)
	if cfg.DBSet {
		add("CHATQ_DB", strconv.Itoa(cfg.DB))
	}
	return env
}

// withoutPassword drops the password from a URL, keeping the user name.
func withoutPassword(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.User(u.User.Username())
		if u.User.Username() == "" {
			u.User = nil
		}
	}
	return u.String()
}
