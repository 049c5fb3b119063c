package queue

import (
	"context"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/spf13/cobra"
)

type createOptions struct {
	cmdutil.Output
	Client      func() (*delayq.Client, error)
	Queue       string
	VT          time.Duration
	Delay       time.Duration
	MaxSize     int
	MaxReceives int
	DeadLetter  string
}

// NewCmdCreate returns `chatq queue create` (runF: see cmdutil.RunWith).
func NewCmdCreate(f *cmdutil.Factory, runF func(context.Context, *createOptions) error) *cobra.Command {
	opts := &createOptions{}
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
		RunE: cmdutil.RunWith(f, opts, runF, createRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue = args[0]
			opts.Client = queueClient(f, cmd)
			return nil, opts.validate()
		}),
	}
	fl := cmd.Flags()
	fl.DurationVar(&opts.VT, "vt", 30*time.Second, "visibility timeout of received messages (whole seconds)")
	fl.DurationVar(&opts.Delay, "delay", 0, "delay of each pushed message (whole seconds)")
	fl.IntVar(&opts.MaxSize, "maxsize", 65536, "largest message in UTF-16 units, 1024-65536 or -1 for unlimited")
	fl.IntVar(&opts.MaxReceives, "max-receives", 0, "move a message to --dead-letter after this many receives")
	fl.StringVar(&opts.DeadLetter, "dead-letter", "", "dead-letter queue for --max-receives")
	cmd.MarkFlagsRequiredTogether("max-receives", "dead-letter")
	return cmdutil.MarkWrite(cmd, "chatq queue ls")
}

func (o *createOptions) validate() error {
	if err := delayq.CheckDuration("--vt", o.VT, time.Second); err != nil {
		return err
	}
	if err := delayq.CheckDuration("--delay", o.Delay, time.Second); err != nil {
		return err
	}
	// The package reads MaxSize 0 as "the default"; given on the command
	// line it is refused, as queue set refuses it.
	if err := checkMaxSizeFlag(o.MaxSize); err != nil {
		return err
	}
	return checkName(o.Queue)
}

func createRun(ctx context.Context, opts *createOptions) error {
	q, err := opts.Client()
	if err != nil {
		return err
	}
	// The package reads 0 as its default (30s); a vt of 0 given here is 0.
	err = q.Create(ctx, opts.Queue, delayq.Attributes{VT: orZero(opts.VT), Delay: orZero(opts.Delay), MaxSize: opts.MaxSize,
		MaxReceives: opts.MaxReceives, DeadLetter: opts.DeadLetter})
	if err != nil {
		return queueErr(err)
	}
	infoTTY(opts.IO, opts.JSON, "created queue %s", opts.Queue)
	if opts.JSON {
		return printStats(ctx, opts.IO, q, opts.Queue)
	}
	return nil
}

// setOptions hold the flags given: nil ones leave their attribute as it is.
type setOptions struct {
	cmdutil.Output
	Client func() (*delayq.Client, error)
	Queue  string
	VT     *time.Duration
	Delay  *time.Duration
	// MaxSize -1 is no limit; MaxReceives 0 (with DeadLetter "") drops
	// the dead-letter policy.
	MaxSize     *int
	MaxReceives *int
	DeadLetter  string
}

// NewCmdSet returns `chatq queue set` (runF: see cmdutil.RunWith).
func NewCmdSet(f *cmdutil.Factory, runF func(context.Context, *setOptions) error) *cobra.Command {
	opts := &setOptions{}
	var vt, delay time.Duration
	var maxSize, maxReceives int
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
		RunE: cmdutil.RunWith(f, opts, runF, setRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queue = args[0]
			opts.Client = queueClient(f, cmd)
			fl := cmd.Flags()
			opts.VT, opts.Delay = given(fl, "vt", vt), given(fl, "delay", delay)
			opts.MaxSize, opts.MaxReceives = given(fl, "maxsize", maxSize), given(fl, "max-receives", maxReceives)
			return nil, opts.validate()
		}),
	}
	fl := cmd.Flags()
	fl.DurationVar(&vt, "vt", 0, "visibility timeout of received messages (whole seconds)")
	fl.DurationVar(&delay, "delay", 0, "delay of each pushed message (whole seconds)")
	fl.IntVar(&maxSize, "maxsize", 0, "largest message in UTF-16 units, 1024-65536 or -1 for unlimited")
	fl.IntVar(&maxReceives, "max-receives", 0, "move a message to --dead-letter after this many receives (0: no policy)")
	fl.StringVar(&opts.DeadLetter, "dead-letter", "", "dead-letter queue for --max-receives")
	cmd.MarkFlagsRequiredTogether("max-receives", "dead-letter")
	cmd.MarkFlagsOneRequired("vt", "delay", "maxsize", "max-receives", "dead-letter")
	return cmdutil.MarkWrite(cmd, "chatq queue stats QUEUE")
}

func (o *setOptions) validate() error {
	if o.VT != nil {
		if err := delayq.CheckDuration("--vt", *o.VT, time.Second); err != nil {
			return err
		}
	}
	if o.Delay != nil {
		if err := delayq.CheckDuration("--delay", *o.Delay, time.Second); err != nil {
			return err
		}
	}
	if o.MaxSize != nil {
		if err := checkMaxSizeFlag(*o.MaxSize); err != nil {
			return err
		}
	}
	if o.MaxReceives != nil && *o.MaxReceives < 0 {
		return cmdutil.UsageErrorf("max receives %d: must not be negative: invalid value", *o.MaxReceives)
	}
	return checkName(o.Queue)
}

func setRun(ctx context.Context, opts *setOptions) error {
	var a delayq.Attributes // zero: unchanged; -1: 0, unlimited or no policy
	if opts.VT != nil {
		a.VT = orZero(*opts.VT)
	}
	if opts.Delay != nil {
		a.Delay = orZero(*opts.Delay)
	}
	if opts.MaxSize != nil {
		a.MaxSize = *opts.MaxSize
	}
	if opts.MaxReceives != nil {
		a.MaxReceives = *opts.MaxReceives
		if a.MaxReceives == 0 {
			a.MaxReceives = -1 // no policy (with --dead-letter '')
		}
		a.DeadLetter = opts.DeadLetter
	}
	q, err := opts.Client()
	if err != nil {
		return err
	}
	if err := q.SetAttributes(ctx, opts.Queue, a); err != nil {
		return queueErr(err)
	}
	infoTTY(opts.IO, opts.JSON, "changed queue %s", opts.Queue)
	if opts.JSON {
		return printStats(ctx, opts.IO, q, opts.Queue)
	}
	return nil
}

// printStats prints queue's stats as JSON, after a create or set.
func printStats(ctx context.Context, ios *iostreams.IOStreams, q *delayq.Client, queue string) error {
	s, err := q.Stats(ctx, queue)
	if err != nil {
		return queueErr(err)
	}
	return ios.WriteJSON(statsJSON(s))
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
