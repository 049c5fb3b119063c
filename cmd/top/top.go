// Package top holds `chatq top`: a live full-screen view of the queues,
// sharded lists and chats under the prefix, and of the server, for the
// operator watching an incident; off a terminal, one snapshot.
package top

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/cli/queuekinds"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

const topLong = `A live view of everything chatq keeps under the prefix, refreshed every
--interval, for the operator watching an incident:

  queues   ready, delayed, in flight; the dead-letter queue and its depth;
           how long the oldest ready message has been due; pushes and
           receives per second (from RSMQ's totalsent and totalrecv) with
           the last minute of pushes as a sparkline
  lists    the sharded lists seen: length and number of shards
  chats    how many, the messages they store, the busiest
  server   version, mode, memory used, connected clients, round trip

Keys: up/down or j/k select a queue, enter opens it (its first messages by
due time with their states, as queue peek), esc goes back, / filters by
name, q or ctrl-c leaves.

In a queue's view, up/down select a message; r retries it (due now), d
deletes it (an ack), R redrives the queue, when it is a dead-letter queue,
back to the queues its messages came from. Each asks y/N on screen first
and then shows what it did, through the calls of chatq queue retry, ack and
redrive: r and d read the message again when pressed and act on that
delivery only (by its receipt), so a message received again before the y
is left alone and the view says so. A user who may not write (chatq acl
--read-only) sees the action refused, with the server's reason. Colours are off with NO_COLOR. When the server
goes away (a restart, a failover) the view says "reconnecting" and resumes
when it answers.

Off a terminal, with --once or with -o json, it prints one snapshot and
exits: the numbers are taken twice, --interval apart, for the rates
(--interval 0: once, and no rates).

What a refresh costs the server, whatever the number of keys:
  1 INFO and 1 PING;
  at most 2 SSCAN (COUNT 500) of the queue registry <ns>:QUEUES;
  at most 4 SCAN (COUNT 500) of the prefix to find lists, and 4 to find
  chats: a big keyspace is discovered over several refreshes, and the view
  says so;
  per queue shown (at most --max-queues): the queue stats script
  (O(log n): counts and the oldest ready age), 20 to a round trip, and
  an HEXISTS of its dead-letter queue when that one is not shown;
  per list shown (at most --max-lists): the length script (O(1)), which
  also returns its end shards;
  one pipeline of a ZCARD and a GET for each of at most --max-chats chats,
  taken in turn;
  with a queue open, one peek of at most 50 messages.
The queues past --max-queues are not read.`

const topExample = `  chatq top
  chatq top --interval 5s --namespace myapp
  chatq top --once
  chatq top --once --jq '.queues[] | {name, ready, oldest_ready_ms}'`

type topOptions struct {
	cmdutil.Output
	Client func() (redis.UniversalClient, error) // built when the run calls it

	Interval time.Duration
	Once     bool
	// Snapshot: print one snapshot and exit (--once, -o json, or no
	// terminal to show the live view on and read keys from).
	Snapshot  bool
	Namespace string // --namespace, else CHATQ_NAMESPACE, else rsmq
	Limits    Limits
	Prefix    string
	Cluster   bool
	URL       string // --url, its password hidden, for errors
	NoColor   bool   // NO_COLOR is set
	Clock     func() time.Time
}

// NewCmdTop returns `chatq top` (runF: see cmdutil.RunWith).
func NewCmdTop(f *cmdutil.Factory, runF func(context.Context, *topOptions) error) *cobra.Command {
	opts := &topOptions{Limits: DefaultLimits, Clock: time.Now}
	var nsFlag string
	cmd := &cobra.Command{
		Use:     "top [--interval DUR] [--once]",
		Short:   "Live view of queues, sharded lists, chats and the server (--once: a snapshot)",
		Long:    topLong,
		Example: topExample,
		Args:    cmdutil.NoArgs,
		RunE: cmdutil.RunWith(f, opts, runF, topRun, func(cmd *cobra.Command, args []string) (cmdutil.Run, error) {
			cfg := f.Config()
			opts.Client, opts.Prefix, opts.Cluster, opts.URL = f.Client, cfg.Prefix, cfg.Cluster, cfg.RedactedURL()
			opts.Snapshot = opts.Once || opts.JSON || !f.IO.OutTTY || !inputTTY(f.IO)
			opts.NoColor = f.Getenv("NO_COLOR") != ""
			if err := opts.validate(); err != nil {
				return nil, err
			}
			ns, err := conn.Namespace(nsFlag, f.Getenv)
			if err != nil {
				return nil, err
			}
			opts.Namespace = ns
			return nil, nil
		}),
	}
	fl := cmd.Flags()
	fl.DurationVar(&opts.Interval, "interval", time.Second, "time between refreshes (at least 100ms; with --once, 0 skips the rates)")
	fl.BoolVar(&opts.Once, "once", false, "print one snapshot and exit (what happens off a terminal)")
	fl.StringVar(&nsFlag, "namespace", "", "RSMQ namespace of the queues (env CHATQ_NAMESPACE, default rsmq)")
	fl.IntVar(&opts.Limits.Queues, "max-queues", DefaultLimits.Queues, "examine at most N queues per refresh")
	fl.IntVar(&opts.Limits.Lists, "max-lists", DefaultLimits.Lists, "examine at most N sharded lists per refresh")
	fl.IntVar(&opts.Limits.Chats, "max-chats", DefaultLimits.Chats, "examine at most N chats per refresh, in turn")
	// It reads; its view's actions write only when asked on screen, and say
	// there what became of them (no exit code carries them).
	return cmdutil.MarkRead(cmd)
}

func (o *topOptions) validate() error {
	switch {
	case o.Interval < 0, !o.Snapshot && o.Interval < 100*time.Millisecond:
		return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --interval %s: at least 100ms", o.Interval),
			"e.g. --interval 1s; a faster refresh would mostly measure itself")
	case o.Limits.Queues < 1 || o.Limits.Lists < 1 || o.Limits.Chats < 1:
		return cmdutil.UsageErrorf("invalid --max-queues, --max-lists or --max-chats: must be at least 1")
	}
	return nil
}

func topRun(ctx context.Context, opts *topOptions) error {
	c, err := opts.Client()
	if err != nil {
		return err
	}
	col := newCollector(c, opts.Namespace, opts.Prefix, opts.Cluster, opts.Limits, opts.Interval, opts.Clock)
	first, err := col.snapshot(ctx, "", "", 0)
	if err != nil {
		return fmt.Errorf("top %s: %w", opts.URL, err)
	}
	if opts.Snapshot {
		s := first
		if opts.Interval > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(opts.Interval):
			}
			if s, err = col.snapshot(ctx, "", "", 0); err != nil {
				return fmt.Errorf("top %s: %w", opts.URL, err)
			}
		}
		return printSnapshot(opts.IO, opts.JSON, s)
	}

	m := newModel(ctx, col, opts.Interval, newStyles(opts.NoColor), first)
	// The queue view's actions call what chatq queue retry, ack and
	// redrive call, on the same namespace.
	m.acts = delayq.New(c, delayq.Options{Namespace: opts.Namespace, Prefix: opts.Prefix, HashTag: opts.Cluster})
	m.kinds = queuekinds.New(m.acts, queues.Env{RDB: c, Prefix: opts.Prefix})
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(opts.IO.In), tea.WithOutput(opts.IO.Out)}
	if opts.NoColor {
		popts = append(popts, tea.WithColorProfile(colorprofile.Ascii))
	}
	p := tea.NewProgram(m, popts...)
	if _, err := p.Run(); err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, tea.ErrInterrupted) {
		return err
	}
	return ctx.Err()
}

// inputTTY reports whether keys can be read from a terminal.
func inputTTY(io *iostreams.IOStreams) bool {
	in, ok := io.In.(*os.File)
	return ok && iostreams.IsTerminal(in)
}

func printSnapshot(io *iostreams.IOStreams, json bool, s *Snapshot) error {
	var err error
	if json {
		err = io.WriteJSON(s)
	} else {
		err = writeTables(func(header ...string) tableWriter { return io.NewTable(header...) }, io.OutTTY, io.Out, s)
	}
	if err == nil && len(s.Queues) < s.QueuesKnown {
		io.Infof("%d of %d queues shown: the most urgent (longest-waiting ready job, then dead jobs or dead letters, then backlog); --max-queues %d shows them all",
			len(s.Queues), s.QueuesKnown, s.QueuesKnown)
	}
	return err
}
