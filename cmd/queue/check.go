package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/spf13/cobra"
)

type checkOptions struct {
	cmdutil.Output
	Client func() (*delayq.Client, error) // built when the run calls it
	Kinds  func() (*queues.Registry, error)

	Queues []string
	// Thresholds are the --max-* flags given, in the order of checks.
	Thresholds []threshold
}

// threshold is one --max-* flag: the most a queue may show.
type threshold struct {
	Check string // the flag's name: max-ready, max-oldest, max-inflight, max-dead
	Max   int64  // messages, or ms for max-oldest
}

// checks are the thresholds in the order they are checked and printed,
// each with what it reads from a queue's stats (dead: its dead-letter
// queue's depth).
var checks = []struct {
	flag  string
	value func(s *delayq.Stats, dead int64) int64
}{
	{"max-ready", func(s *delayq.Stats, _ int64) int64 { return s.Ready }},
	{"max-oldest", func(s *delayq.Stats, _ int64) int64 { return s.OldestReadyAge.Milliseconds() }},
	{"max-inflight", func(s *delayq.Stats, _ int64) int64 { return s.InFlight }},
	{"max-dead", func(_ *delayq.Stats, dead int64) int64 { return dead }},
}

// NewCmdCheck returns `chatq queue check` (runF: see cmdutil.RunWith).
func NewCmdCheck(f *cmdutil.Factory, runF func(context.Context, *checkOptions) error) *cobra.Command {
	opts := &checkOptions{}
	var maxReady, maxInflight, maxDead int64
	var maxOldest time.Duration
	cmd := &cobra.Command{
		Use:   "check QUEUE... [--max-ready N] [--max-oldest DUR] [--max-inflight N] [--max-dead N]",
		Short: "Check queues against thresholds, for cron and health checks (exit 5 on a breach)",
		Long: `Check each QUEUE against the thresholds given, and print each one breached:

  --max-ready N      at most N ready (due) messages
  --max-oldest DUR   the oldest ready message due for at most DUR (work has
                     waited that long for a consumer)
  --max-inflight N   at most N messages in flight (received, not acked)
  --max-dead N       at most N messages in the queue's dead-letter queue
                     (0 for a queue without one); for a BullMQ, asynq or
                     stream queue (KIND:NAME), its dead jobs

A queue whose dead-letter queue was deleted fails --max-dead (exit 1): its
dead letters cannot be counted, and its policy is off (messages received
too often come back forever).

Exit 0 when every threshold holds, 5 when one is breached, 1 when a queue
could not be read (missing, a connection error) and none was breached, 2 on
a usage error. With -o json a check that could not run at all still prints
{"ok":false,"queues":[],"error":"..."}. Nothing is printed when all hold (a line on stderr on a
terminal). Text: one line per breach, QUEUE, CHECK, VALUE and LIMIT (a
table on a terminal). JSON: {"ok":false,"queues":[{"queue":"jobs","ok":false,
"dead_letter":"","checks":[{"check":"max-ready","value":120,"limit":100,
"ok":false}]}]}; max-oldest values are milliseconds.

Read only: the stats script of each queue, 20 to a round trip, and of the
dead-letter queues --max-dead reads, each O(log n).`,
		Example: `  chatq queue check jobs --max-ready 1000 --max-oldest 5m
  chatq queue check jobs emails --max-dead 0 || notify "dead letters"
  chatq queue check bullmq:mail asynq:default --max-dead 0 --max-oldest 5m
  chatq queue check jobs --max-oldest 10m --jq '.queues[].checks[] | select(.ok | not)'`,
		Args: cmdutil.MinArgs(1),
		RunE: cmdutil.RunWith(f, opts, runF, checkRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			opts.Queues = args
			opts.Client, opts.Kinds = queueClient(f, cmd), kindsClient(f, cmd)
			opts.Thresholds = nil
			for _, t := range []struct {
				flag string
				max  int64
			}{{"max-ready", maxReady}, {"max-oldest", maxOldest.Milliseconds()}, {"max-inflight", maxInflight}, {"max-dead", maxDead}} {
				if cmd.Flags().Changed(t.flag) {
					opts.Thresholds = append(opts.Thresholds, threshold{t.flag, t.max})
				}
			}
			return nil, opts.validate()
		}),
	}
	fl := cmd.Flags()
	fl.Int64Var(&maxReady, "max-ready", 0, "breached when more than N messages are ready")
	fl.DurationVar(&maxOldest, "max-oldest", 0, "breached when the oldest ready message has been due longer than DUR")
	fl.Int64Var(&maxInflight, "max-inflight", 0, "breached when more than N messages are in flight")
	fl.Int64Var(&maxDead, "max-dead", 0, "breached when the dead-letter queue holds more than N messages")
	return cmdutil.MarkRead(cmd)
}

func (o *checkOptions) validate() error {
	for _, q := range o.Queues {
		if isKindAddress(q) {
			continue
		}
		if err := checkName(q); err != nil {
			return err
		}
	}
	if len(o.Thresholds) == 0 {
		return cmdutil.WithHint(cmdutil.UsageErrorf("no threshold to check"),
			"give one or more of --max-ready N, --max-oldest DUR, --max-inflight N, --max-dead N")
	}
	for _, t := range o.Thresholds {
		if t.Max < 0 {
			return cmdutil.UsageErrorf("invalid --%s %s: not negative", t.Check, show(t.Check, t.Max))
		}
	}
	return nil
}

// checkResult is one queue's checks; JSON is the contract of -o json.
type checkResult struct {
	Queue      string      `json:"queue"`
	OK         bool        `json:"ok"`
	DeadLetter string      `json:"dead_letter"`
	Checks     []checkJSON `json:"checks"`
	Error      string      `json:"error,omitempty"`
}

type checkJSON struct {
	Check string `json:"check"`
	Value int64  `json:"value"`
	Limit int64  `json:"limit"`
	OK    bool   `json:"ok"`
}

// breachError is the error of a check that found thresholds breached: it
// exits 5.
type breachError struct{ breaches []string }

func (e *breachError) Error() string {
	n := len(e.breaches)
	list := strings.Join(e.breaches[:min(n, 3)], "; ")
	if n > 3 {
		list += fmt.Sprintf("; and %d more", n-3)
	}
	if n == 1 {
		return "threshold breached: " + list
	}
	return fmt.Sprintf("%d thresholds breached: %s", n, list)
}

func (e *breachError) Breached() bool { return true }

func checkRun(ctx context.Context, o *checkOptions) error {
	err := o.check(ctx)
	var hold *holdError
	if err != nil && o.JSON && !errors.As(err, &hold) {
		// A check that could not run says so in JSON too: a monitor
		// parsing stdout never reads nothing.
		o.IO.WriteJSON(struct {
			OK     bool          `json:"ok"`
			Queues []checkResult `json:"queues"`
			Error  string        `json:"error"`
		}{false, []checkResult{}, err.Error()})
	}
	if errors.As(err, &hold) {
		return hold.err
	}
	return err
}

// holdError is a check's result once printed.
type holdError struct{ err error }

func (e *holdError) Error() string { return e.err.Error() }

func (o *checkOptions) check(ctx context.Context) error {
	q, err := o.Client()
	if err != nil {
		return err
	}
	var names, others []string
	for _, n := range o.Queues {
		if isKindAddress(n) {
			others = append(others, n)
		} else {
			names = append(names, n)
		}
	}
	var stats []delayq.Stats
	if len(names) > 0 {
		if stats, err = q.StatsEach(ctx, names); err != nil {
			return err
		}
	}
	dead, err := deadLetterDepths(ctx, q, stats, o.Thresholds)
	if err != nil {
		return err
	}
	var results []checkResult
	var breaches []string
	var failed error
	fail := func(r *checkResult, err error) {
		r.OK, r.Error = false, err.Error()
		if failed == nil {
			failed = err
		} else {
			o.IO.Infof("error: %v", err)
		}
	}
	for _, name := range others {
		r := checkResult{Queue: name, OK: true, Checks: []checkJSON{}}
		c, err := o.kindCounts(ctx, name)
		if err != nil {
			fail(&r, err)
			results = append(results, r)
			continue
		}
		for _, t := range o.Thresholds {
			v, err := kindValue(name, t.Check, c)
			if err != nil {
				fail(&r, err)
				continue
			}
			ok := v <= t.Max
			r.Checks = append(r.Checks, checkJSON{t.Check, v, t.Max, ok})
			if !ok {
				r.OK = false
				breaches = append(breaches, fmt.Sprintf("%s %s %s > %s", name, t.Check, show(t.Check, v), show(t.Check, t.Max)))
			}
		}
		results = append(results, r)
	}
	for i := range stats {
		s := &stats[i]
		r := checkResult{Queue: s.Name, OK: true, DeadLetter: s.DeadLetter, Checks: []checkJSON{}}
		if s.Err != nil {
			fail(&r, queueErr(s.Err))
			results = append(results, r)
			continue
		}
		for _, t := range o.Thresholds {
			for _, c := range checks {
				if c.flag != t.Check {
					continue
				}
				v := c.value(s, dead[s.DeadLetter])
				ok := v <= t.Max
				r.Checks = append(r.Checks, checkJSON{t.Check, v, t.Max, ok})
				if !ok {
					r.OK = false
					breaches = append(breaches, fmt.Sprintf("%s %s %s > %s", s.Name, t.Check, show(t.Check, v), show(t.Check, t.Max)))
				}
			}
		}
		o.warn(s)
		if s.DeadLetterMissing && o.checks("max-dead") {
			// Its policy is off: messages received too often come back
			// forever, and nothing can count its dead letters. That is no
			// pass.
			fail(&r, cmdutil.WithHint(fmt.Errorf("queue %s: its dead-letter queue %s does not exist, so --max-dead cannot be checked (and the policy is off)", s.Name, s.DeadLetter),
				fmt.Sprintf("create it with `chatq queue create %s`, or drop the policy with `chatq queue set %s --max-receives 0 --dead-letter ''`", s.DeadLetter, s.Name)))
		}
		results = append(results, r)
	}
	if err := o.print(results); err != nil {
		return err
	}
	switch {
	case len(breaches) > 0:
		if failed != nil {
			o.IO.Infof("error: %v", failed)
		}
		return &holdError{&breachError{breaches}}
	case failed != nil:
		return &holdError{failed}
	}
	infoTTY(o.IO, o.JSON, "all thresholds hold (%s)", plural(int64(len(results)), "queue"))
	return nil
}

// deadLetterDepths reads the depth of the dead-letter queues of stats when
// --max-dead is given: from stats when a queue checked is one, else with
// their own stats (20 a round trip).
func deadLetterDepths(ctx context.Context, q *delayq.Client, stats []delayq.Stats, ts []threshold) (map[string]int64, error) {
	depth := map[string]int64{}
	wanted := false
	for _, t := range ts {
		wanted = wanted || t.Check == "max-dead"
	}
	if !wanted {
		return depth, nil
	}
	read := map[string]bool{}
	for _, s := range stats {
		if s.Err == nil {
			read[s.Name] = true
			depth[s.Name] = s.Messages
		}
	}
	var more []string
	for _, s := range stats {
		if s.Err == nil && s.DeadLetter != "" && !s.DeadLetterMissing && !read[s.DeadLetter] {
			read[s.DeadLetter] = true
			more = append(more, s.DeadLetter)
		}
	}
	if len(more) == 0 {
		return depth, nil
	}
	dl, err := q.StatsEach(ctx, more)
	if err != nil {
		return nil, err
	}
	for _, s := range dl {
		if s.Err == nil {
			depth[s.Name] = s.Messages
		}
	}
	return depth, nil
}

// warn says on stderr what may make a queue's numbers off.
func (o *checkOptions) warn(s *delayq.Stats) {
	for _, t := range o.Thresholds {
		switch {
		case t.Check == "max-inflight" && !s.SplitExact:
			o.IO.Infof("warning: inflight of %s may be off: an rsmq client received from it (`chatq queue stats %s` rebuilds the index)", s.Name, s.Name)
		}
	}
}

// show renders a check's value for people: a duration for max-oldest.
func show(check string, v int64) string {
	if check == "max-oldest" {
		return roughly(time.Duration(v) * time.Millisecond)
	}
	return fmt.Sprint(v)
}

func (o *checkOptions) print(results []checkResult) error {
	if o.JSON {
		ok := true
		for _, r := range results {
			ok = ok && r.OK
		}
		return o.IO.WriteJSON(struct {
			OK     bool          `json:"ok"`
			Queues []checkResult `json:"queues"`
		}{ok, results})
	}
	var t *iostreams.Table
	for _, r := range results {
		for _, c := range r.Checks {
			if c.OK {
				continue
			}
			if t == nil {
				t = o.IO.NewTable("QUEUE", "CHECK", "VALUE", "LIMIT")
			}
			t.Row(r.Queue, c.Check, show(c.Check, c.Value), show(c.Check, c.Limit))
		}
	}
	if t == nil {
		return nil
	}
	return t.Flush()
}

// checks reports whether the threshold flag is given.
func (o *checkOptions) checks(flag string) bool {
	for _, t := range o.Thresholds {
		if t.Check == flag {
			return true
		}
	}
	return false
}

// kindCounts reads the counts of another kind's queue.
func (o *checkOptions) kindCounts(ctx context.Context, address string) (*queues.Counts, error) {
	reg, err := o.Kinds()
	if err != nil {
		return nil, err
	}
	q, err := reg.Open(address)
	if err != nil {
		return nil, kindErr(err, address)
	}
	c, err := q.Counts(ctx)
	return c, kindErr(err, address)
}

// kindValue is what check reads of another kind's counts: --max-dead is
// its dead jobs (a kind without a dead state cannot be checked so).
func kindValue(address, check string, c *queues.Counts) (int64, error) {
	var n *int64
	switch check {
	case "max-ready":
		n = c.Ready
	case "max-inflight":
		n = c.Inflight
	case "max-dead":
		n = c.Dead
	case "max-oldest":
		if c.OldestReady == nil {
			return 0, nil
		}
		return c.OldestReady.Milliseconds(), nil
	}
	if n == nil {
		return 0, fmt.Errorf("queue %s: its kind has no state for --%s", address, check)
	}
	return *n, nil
}
