// Package top holds `chatq top`: a live full-screen view of the queues,
// sharded lists and chats under the prefix, and of the server, for the
// operator watching an incident; off a terminal, one snapshot.
package top

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/chatq-dev/chatq/internal/cmdutil"
	"github.com/chatq-dev/chatq/internal/iostreams"
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
name, q or ctrl-c leaves. Colours are off with NO_COLOR. When the server
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
  (O(log n): counts and the oldest ready age), and an HEXISTS of its
  dead-letter queue when it has one;
  per list shown (at most --max-lists): the length script (O(1)), which
  also returns its end shards;
  one pipeline of a ZCARD and a GET for each of at most --max-chats chats,
  taken in turn;
  with a queue open, one peek of at most 50 messages.
The queues past --max-queues are not read.`

const topExample = `  chatq top
  chatq top --interval 5s --namespace myapp
  chatq top --once
  chatq top --once -o json | jq '.queues[] | {name, ready, oldest_ready_ms}'`

type topOptions struct {
	f         *cmdutil.Factory
	interval  time.Duration
	once      bool
	namespace string
	lim       Limits
	clock     func() time.Time
}

// NewCmd returns `chatq top`.
func NewCmd(f *cmdutil.Factory) *cobra.Command {
	opts := &topOptions{f: f, lim: DefaultLimits, clock: time.Now}
	cmd := &cobra.Command{
		Use:     "top [--interval DUR] [--once]",
		Short:   "Live view of queues, sharded lists, chats and the server (--once: a snapshot)",
		Long:    topLong,
		Example: topExample,
		Args:    cmdutil.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return topRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.DurationVar(&opts.interval, "interval", time.Second, "time between refreshes (at least 100ms; with --once, 0 skips the rates)")
	fl.BoolVar(&opts.once, "once", false, "print one snapshot and exit (what happens off a terminal)")
	fl.StringVar(&opts.namespace, "namespace", "", "RSMQ namespace of the queues (env CHATQ_NAMESPACE, default rsmq)")
	fl.IntVar(&opts.lim.Queues, "max-queues", DefaultLimits.Queues, "examine at most N queues per refresh")
	fl.IntVar(&opts.lim.Lists, "max-lists", DefaultLimits.Lists, "examine at most N sharded lists per refresh")
	fl.IntVar(&opts.lim.Chats, "max-chats", DefaultLimits.Chats, "examine at most N chats per refresh, in turn")
	return cmdutil.MarkRead(cmd)
}

func topRun(ctx context.Context, opts *topOptions) error {
	f := opts.f
	snapshotOnly := opts.once || f.JSON() || !f.IO.OutTTY || !inputTTY(f.IO)
	switch {
	case opts.interval < 0, !snapshotOnly && opts.interval < 100*time.Millisecond:
		return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --interval %s: at least 100ms", opts.interval),
			"e.g. --interval 1s; a faster refresh would mostly measure itself")
	case opts.lim.Queues < 1 || opts.lim.Lists < 1 || opts.lim.Chats < 1:
		return cmdutil.UsageErrorf("invalid --max-queues, --max-lists or --max-chats: must be at least 1")
	}
	ns, err := namespace(f, opts.namespace)
	if err != nil {
		return err
	}
	c, err := f.Client()
	if err != nil {
		return err
	}
	col := newCollector(c, ns, f.Prefix(), f.Config().Cluster, opts.lim, opts.interval, opts.clock)
	first, err := col.snapshot(ctx, "", "", 0)
	if err != nil {
		return fmt.Errorf("top %s: %w", f.Config().RedactedURL(), err)
	}
	if snapshotOnly {
		s := first
		if opts.interval > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(opts.interval):
			}
			if s, err = col.snapshot(ctx, "", "", 0); err != nil {
				return fmt.Errorf("top %s: %w", f.Config().RedactedURL(), err)
			}
		}
		return printSnapshot(f, s)
	}

	noColor := f.Getenv("NO_COLOR") != ""
	m := newModel(ctx, col, opts.interval, newStyles(noColor), first)
	popts := []tea.ProgramOption{tea.WithContext(ctx), tea.WithInput(f.IO.In), tea.WithOutput(f.IO.Out)}
	if noColor {
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

func printSnapshot(f *cmdutil.Factory, s *Snapshot) error {
	if f.JSON() {
		return f.IO.WriteJSON(s)
	}
	return writeTables(func(header ...string) tableWriter { return f.IO.NewTable(header...) }, f.IO.OutTTY, f.IO.Out, s)
}

// namespace is --namespace, else CHATQ_NAMESPACE, else RSMQ's default, as
// for the queue commands.
func namespace(f *cmdutil.Factory, flag string) (string, error) {
	ns := flag
	if ns == "" {
		ns = f.Getenv("CHATQ_NAMESPACE")
	}
	if ns == "" {
		ns = "rsmq"
	}
	if strings.ContainsAny(ns, "{} \t\r\n") {
		return "", cmdutil.UsageErrorf("invalid --namespace %q: no whitespace, '{' or '}'", ns)
	}
	return ns, nil
}
