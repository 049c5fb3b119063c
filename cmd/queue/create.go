package queue

import (
	"context"
	"time"

	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type queueCreateOptions struct {
	f           *cmdutil.Factory
	cmd         *cobra.Command
	queue       string
	vt          time.Duration
	delay       time.Duration
	maxSize     int
	maxReceives int
	deadLetter  string
}

func newQueueCreateCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueCreateOptions{f: f}
	cmd := &cobra.Command{
		Use:   "create QUEUE",
		Short: "Create a queue (RSMQ createQueue)",
		Long: `Create a queue. --vt and --delay are stored in whole seconds, as RSMQ stores
them (0 to 9999999); --maxsize is the largest message in UTF-16 code units
(1024 to 65536, or -1 for unlimited). With --max-receives N and
--dead-letter Q2 (an existing queue), a message received N times is moved
to Q2 by the receive that would exceed the limit.`,
		Example: `  chatq queue create jobs
  chatq queue create emails --vt 2m --delay 5s --maxsize -1
  chatq queue create jobs-dead && chatq queue create jobs --max-receives 5 --dead-letter jobs-dead`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue = cmd, args[0]
			return queueCreateRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&opts.vt, "vt", 30*time.Second, "visibility timeout of received messages (whole seconds)")
	fl.DurationVar(&opts.delay, "delay", 0, "delay of each pushed message (whole seconds)")
	fl.IntVar(&opts.maxSize, "maxsize", 65536, "largest message in UTF-16 units, 1024-65536 or -1 for unlimited")
	fl.IntVar(&opts.maxReceives, "max-receives", 0, "move a message to --dead-letter after this many receives")
	fl.StringVar(&opts.deadLetter, "dead-letter", "", "dead-letter queue for --max-receives")
	cmd.MarkFlagsRequiredTogether("max-receives", "dead-letter")
	return cmd
}

func queueCreateRun(ctx context.Context, opts *queueCreateOptions) error {
	if err := checkFlagDuration("vt", opts.vt, true); err != nil {
		return err
	}
	if err := checkFlagDuration("delay", opts.delay, true); err != nil {
		return err
	}
	// The package reads MaxSize 0 as "the default"; given on the command
	// line it is refused, as queue set refuses it.
	if err := checkMaxSizeFlag(opts.maxSize); err != nil {
		return err
	}
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	err = q.Create(ctx, opts.queue, delayq.Attributes{VT: opts.vt, Delay: opts.delay, MaxSize: opts.maxSize,
		MaxReceives: opts.maxReceives, DeadLetter: opts.deadLetter})
	if err != nil {
		return queueErr(err)
	}
	infoTTY(opts.f, "created queue %s", opts.queue)
	if opts.f.JSON() {
		s, err := q.Stats(ctx, opts.queue)
		if err != nil {
			return queueErr(err)
		}
		return opts.f.IO.WriteJSON(statsJSON(s))
	}
	return nil
}

type queueSetOptions struct {
	f     *cmdutil.Factory
	cmd   *cobra.Command
	queue string
	queueCreateOptions
}

func newQueueSetCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &queueSetOptions{f: f}
	cmd := &cobra.Command{
		Use:   "set QUEUE [--vt DUR] [--delay DUR] [--maxsize N] [--max-receives N --dead-letter Q2]",
		Short: "Change a queue's attributes (RSMQ setQueueAttributes)",
		Long: `Change a queue's attributes; only the flags given change. The limits are
those of create. --max-receives 0 --dead-letter '' removes the dead-letter
policy.`,
		Example: `  chatq queue set jobs --vt 5m
  chatq queue set jobs --max-receives 3 --dead-letter jobs-dead
  chatq queue set jobs --max-receives 0 --dead-letter ''`,
		Args: cmdutil.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.cmd, opts.queue = cmd, args[0]
			return queueSetRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&opts.vt, "vt", 0, "visibility timeout of received messages (whole seconds)")
	fl.DurationVar(&opts.delay, "delay", 0, "delay of each pushed message (whole seconds)")
	fl.IntVar(&opts.maxSize, "maxsize", 0, "largest message in UTF-16 units, 1024-65536 or -1 for unlimited")
	fl.IntVar(&opts.maxReceives, "max-receives", 0, "move a message to --dead-letter after this many receives (0: no policy)")
	fl.StringVar(&opts.deadLetter, "dead-letter", "", "dead-letter queue for --max-receives")
	cmd.MarkFlagsRequiredTogether("max-receives", "dead-letter")
	cmd.MarkFlagsOneRequired("vt", "delay", "maxsize", "max-receives", "dead-letter")
	return cmd
}

func queueSetRun(ctx context.Context, opts *queueSetOptions) error {
	fl := opts.cmd.Flags()
	var a delayq.Attributes // zero: unchanged; -1: 0, unlimited or no policy
	if fl.Changed("vt") {
		if err := checkFlagDuration("vt", opts.vt, true); err != nil {
			return err
		}
		a.VT = orZero(opts.vt)
	}
	if fl.Changed("delay") {
		if err := checkFlagDuration("delay", opts.delay, true); err != nil {
			return err
		}
		a.Delay = orZero(opts.delay)
	}
	if fl.Changed("maxsize") {
		if err := checkMaxSizeFlag(opts.maxSize); err != nil {
			return err
		}
		a.MaxSize = opts.maxSize
	}
	if fl.Changed("max-receives") {
		switch {
		case opts.maxReceives < 0:
			return cmdutil.UsageErrorf("max receives %d: must not be negative: invalid value", opts.maxReceives)
		case opts.maxReceives == 0:
			a.MaxReceives = -1 // no policy (with --dead-letter '')
		default:
			a.MaxReceives = opts.maxReceives
		}
		a.DeadLetter = opts.deadLetter
	}
	if err := delayq.CheckName(opts.queue); err != nil {
		return err
	}
	q, err := queueClient(opts.f, opts.cmd)
	if err != nil {
		return err
	}
	if err := q.SetAttributes(ctx, opts.queue, a); err != nil {
		return queueErr(err)
	}
	infoTTY(opts.f, "changed queue %s", opts.queue)
	if opts.f.JSON() {
		s, err := q.Stats(ctx, opts.queue)
		if err != nil {
			return queueErr(err)
		}
		return opts.f.IO.WriteJSON(statsJSON(s))
	}
	return nil
}

// checkMaxSizeFlag checks --maxsize for create and set alike: RSMQ's range
// (the help says it), or -1.
func checkMaxSizeFlag(n int) error {
	if n != -1 && (n < 1024 || n > 65536) {
		return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --maxsize %d: must be from 1024 to 65536, or -1 for unlimited (UTF-16 units)", n),
			"e.g. --maxsize 65536 (RSMQ's default and largest), or --maxsize -1")
	}
	return nil
}

// orZero is a duration flag as a delayq option: 0 given is -1 there (0
// there means the default).
func orZero(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}
