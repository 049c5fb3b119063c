package queue

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/spf13/cobra"
)

// kindTarget is a queue of a kind other than RSMQ's, as a command names it
// (KIND:NAME): the commands that reach every kind run through it
// (pkg/queues), the RSMQ ones through pkg/delayq as before.
type kindTarget struct {
	cmdutil.Output
	Kinds   func() (*queues.Registry, error)
	Address string
}

// targetOf is the queue of another kind at address, for command cmd.
func targetOf(f *cmdutil.Factory, cmd *cobra.Command, address string) *kindTarget {
	return &kindTarget{Output: f.Output(), Kinds: kindsClient(f, cmd), Address: address}
}

// open returns the target's queue; a malformed address or an unknown
// kind is a usage error.
func (t *kindTarget) open() (queues.Queue, error) {
	reg, err := t.Kinds()
	if err != nil {
		return nil, err
	}
	q, err := reg.Open(t.Address)
	switch {
	case errors.Is(err, queues.ErrUnknownKind):
		return nil, cmdutil.WithHint(cmdutil.UsageErr(err), "a queue is NAME (RSMQ's) or KIND:NAME as `chatq queue ls` prints it")
	case err != nil:
		return nil, kindErr(err, t.Address)
	}
	return q, nil
}

// kindErr adds hints to the errors of every kind.
func kindErr(err error, address string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, queues.ErrQueueNotFound):
		return cmdutil.WithHint(err, "list the queues of every kind with `chatq queue ls` (check --prefix)")
	case errors.Is(err, queues.ErrJobNotFound):
		return cmdutil.WithHint(err, fmt.Sprintf("it was removed, or the id is wrong (see `chatq queue peek %s`)", address))
	case errors.Is(err, queues.ErrReadOnly):
		return cmdutil.WithHint(err, "chatq reads this layout version but writes only the versions it was tested with (docs/kinds.md); nothing was changed")
	}
	return err
}

// capability returns q as the action interface T, or a usage error
// saying that the kind has no such operation.
func capability[T any](q queues.Queue, what string) (T, error) {
	a, ok := q.(T)
	if !ok {
		kind, _ := queues.Parse(q.Address())
		return a, cmdutil.WithHint(cmdutil.UsageErrorf("%s queues have no %s", kind, what), "see docs/kinds.md for what each kind can do")
	}
	return a, nil
}

// kindStats prints the counts of the target's queue.
func kindStats(ctx context.Context, t *kindTarget) error {
	q, err := t.open()
	if err != nil {
		return err
	}
	c, err := q.Counts(ctx)
	if err != nil {
		return kindErr(err, t.Address)
	}
	// The row queue ls -l prints for it, with the same fields.
	kind, _ := queues.Parse(t.Address)
	j := queueLongJSON{Name: t.Address, Kind: kind}
	j.fill(c)
	if t.JSON {
		return t.IO.WriteJSON(j)
	}
	oldest := "-"
	if c.OldestReady != nil {
		oldest = roughly(*c.OldestReady)
	}
	tb := t.IO.NewTable("FIELD", "VALUE")
	tb.Row("name", t.Address)
	tb.Row("kind", kind)
	tb.Row("msgs", *j.Msgs)
	for _, s := range queues.States {
		tb.Row(s, count(c.Of(s)))
	}
	tb.Row("paused", yesNo(c.Paused))
	tb.Row("oldest_ready", oldest)
	for _, k := range sortedKeys(c.Other) {
		tb.Row("other."+k, c.Other[k])
	}
	if c.Version != "" {
		tb.Row("version", c.Version)
	}
	if err := tb.Flush(); err != nil {
		return err
	}
	if c.ReadOnly != "" {
		t.IO.Infof("warning: %s is read-only for chatq: %s", t.Address, c.ReadOnly)
	}
	return nil
}

// jobJSON is a job of any kind in peek, get and export -o json.
type jobJSON struct {
	ID        string         `json:"id"`
	State     string         `json:"state"`
	KindState string         `json:"kind_state,omitempty"`
	Name      string         `json:"name,omitempty"`
	Data      string         `json:"data"`
	Attempts  int64          `json:"attempts"`
	Error     string         `json:"error,omitempty"`
	Stack     string         `json:"stack,omitempty"`
	Created   any            `json:"created"`
	Due       any            `json:"due"`
	Started   any            `json:"started"`
	Finished  any            `json:"finished"`
	Consumer  string         `json:"consumer,omitempty"`
	IdleMs    any            `json:"idle_ms"`
	Extra     map[string]any `json:"extra,omitempty"`
}

func jobOut(j *queues.Job) jobJSON {
	o := jobJSON{ID: j.ID, State: j.State, KindState: j.KindState, Name: j.Name, Data: j.Data, Attempts: j.Attempts,
		Error: j.Error, Stack: j.Stack, Created: ms(j.Created), Due: ms(j.Due), Started: ms(j.Started), Finished: ms(j.Finished),
		Consumer: j.Consumer, Extra: j.Extra}
	if j.Idle > 0 {
		o.IdleMs = j.Idle.Milliseconds()
	}
	return o
}

// kindScan is what peek and export select of a queue of another kind.
type kindScan struct {
	opt queues.ScanOptions
	re  *regexp.Regexp // --regexp, matched here over id, name and data
}

// scanOf maps peek's and export's filters onto a Scan's options.
func scanOf(ff *filterFlags, n int) (kindScan, error) {
	if ff.OlderThan != nil {
		return kindScan{}, cmdutil.WithHint(cmdutil.UsageErrorf("--older-than is for RSMQ queues"), "use --state and --grep on queues of other kinds")
	}
	sub, re, err := ff.Search.Compile()
	if err != nil {
		return kindScan{}, err
	}
	ks := kindScan{opt: queues.ScanOptions{State: ff.State, Grep: sub, Max: n, MinAttempts: int64(ff.MinReceives)}, re: re}
	if ff.InFlightFor != nil {
		ks.opt.InflightFor = *ff.InFlightFor
		if ks.opt.State == "" {
			ks.opt.State = queues.Inflight
		}
	}
	if re != nil {
		ks.opt.Max = 0 // the regexp filters here: count after it
	}
	return ks, nil
}

// scan passes fn the jobs ks selects, at most n (0: all).
func (ks kindScan) scan(ctx context.Context, q queues.Queue, n int, fn func([]queues.Job) error) (int, error) {
	passed := 0
	err := q.Scan(ctx, ks.opt, func(page []queues.Job) error {
		if ks.re != nil {
			kept := page[:0]
			for _, j := range page {
				if ks.re.MatchString(j.ID) || ks.re.MatchString(j.Name) || ks.re.MatchString(j.Data) {
					kept = append(kept, j)
				}
			}
			page = kept
		}
		if n > 0 && passed+len(page) > n {
			page = page[:n-passed]
		}
		passed += len(page)
		if len(page) > 0 {
			if err := fn(page); err != nil {
				return err
			}
		}
		if n > 0 && passed >= n {
			return queues.ErrStop
		}
		return nil
	})
	if errors.Is(err, queues.ErrStop) {
		err = nil
	}
	return passed, err
}

// kindPeek prints the first n jobs the filters select.
func kindPeek(ctx context.Context, t *kindTarget, ff *filterFlags, n int) error {
	ks, err := scanOf(ff, n)
	if err != nil {
		return err
	}
	q, err := t.open()
	if err != nil {
		return err
	}
	var jobs []jobJSON
	if _, err := ks.scan(ctx, q, n, func(page []queues.Job) error {
		for i := range page {
			jobs = append(jobs, jobOut(&page[i]))
		}
		return nil
	}); err != nil {
		return kindErr(err, t.Address)
	}
	if t.JSON {
		if jobs == nil {
			jobs = []jobJSON{}
		}
		if err := t.IO.WriteJSON(jobs); err != nil {
			return err
		}
	} else {
		tb := t.IO.NewTable("ID", "STATE", "NAME", "ATTEMPTS", "DATA", "ERROR").WhenEmpty("no jobs")
		for _, j := range jobs {
			tb.Row(j.ID, j.State, dash(j.Name), j.Attempts, oneLine(j.Data, 60), dash(oneLine(j.Error, 60)))
		}
		if err := tb.Flush(); err != nil {
			return err
		}
	}
	if len(jobs) == 0 {
		return cmdutil.ErrNothing
	}
	return nil
}

// kindExport writes every job the filters select as JSON Lines.
func kindExport(ctx context.Context, t *kindTarget, ff *filterFlags, w func(v any) error) (int, error) {
	ks, err := scanOf(ff, 0)
	if err != nil {
		return 0, err
	}
	q, err := t.open()
	if err != nil {
		return 0, err
	}
	n, err := ks.scan(ctx, q, 0, func(page []queues.Job) error {
		for i := range page {
			if err := w(jobOut(&page[i])); err != nil {
				return err
			}
		}
		return nil
	})
	return n, kindErr(err, t.Address)
}

// kindGet prints one job.
func kindGet(ctx context.Context, t *kindTarget, id string) error {
	q, err := t.open()
	if err != nil {
		return err
	}
	j, err := q.Get(ctx, id)
	if err != nil {
		return kindErr(err, t.Address)
	}
	o := jobOut(j)
	if t.JSON {
		return t.IO.WriteJSON(o)
	}
	tb := t.IO.NewTable("FIELD", "VALUE")
	tb.Row("id", o.ID)
	tb.Row("state", o.State)
	if o.KindState != "" {
		tb.Row("kind_state", o.KindState)
	}
	tb.Row("name", dash(o.Name))
	tb.Row("attempts", o.Attempts)
	for _, r := range []struct {
		k string
		v time.Time
	}{{"created", j.Created}, {"due", j.Due}, {"started", j.Started}, {"finished", j.Finished}} {
		tb.Row(r.k, stamp(r.v))
	}
	if o.Consumer != "" {
		tb.Row("consumer", o.Consumer)
	}
	if j.Idle > 0 {
		tb.Row("idle", roughly(j.Idle))
	}
	if o.Error != "" {
		tb.Row("error", o.Error)
	}
	if o.Stack != "" {
		tb.Row("stack", o.Stack)
	}
	tb.Row("data", o.Data)
	return tb.Flush()
}

// actionJSON is what an action did, in -o json.
type actionJSON struct {
	Queue   string            `json:"queue"`
	Action  string            `json:"action"`
	Done    []string          `json:"done"`
	Skipped map[string]string `json:"skipped,omitempty"`
}

// report prints an action's result: the ids done on stdout, those
// skipped on stderr with why; it exits 1 when ids were asked for and some
// were skipped.
func (t *kindTarget) report(action string, r *queues.Result, asked int) error {
	if r.Done == nil {
		r.Done = []string{}
	}
	if t.JSON {
		if err := t.IO.WriteJSON(actionJSON{Queue: t.Address, Action: action, Done: r.Done, Skipped: r.Skipped}); err != nil {
			return err
		}
	} else {
		for _, id := range r.Done {
			fmt.Fprintln(t.IO.Out, id)
		}
	}
	for _, id := range sortedKeys(r.Skipped) {
		t.IO.Infof("%s: %s left: %s", action, id, r.Skipped[id])
	}
	infoTTY(t.IO, t.JSON, "%s: %s of %s", action, plural(int64(len(r.Done)), "job"), t.Address)
	if asked > 0 && len(r.Skipped) > 0 {
		return fmt.Errorf("%s: %d of %d left (see above); nothing else was changed", action, len(r.Skipped), asked)
	}
	return nil
}

// kindRetry runs jobs again now.
func kindRetry(ctx context.Context, t *kindTarget, ids []string) error {
	q, err := t.open()
	if err != nil {
		return err
	}
	a, err := capability[queues.Retrier](q, "retry")
	if err != nil {
		return err
	}
	r, err := a.Retry(ctx, ids)
	if err != nil {
		return kindErr(err, t.Address)
	}
	return t.report("retry", r, len(ids))
}

// kindRedrive moves up to n dead jobs back.
func kindRedrive(ctx context.Context, t *kindTarget, n int) error {
	q, err := t.open()
	if err != nil {
		return err
	}
	a, err := capability[queues.Redriver](q, "redrive")
	if err != nil {
		return err
	}
	r, err := a.Redrive(ctx, n)
	if err != nil {
		return kindErr(err, t.Address)
	}
	return t.report("redrive", r, 0)
}

// kindPurge deletes the ready jobs of the target's queue as its library's
// purge does, guarded as an RSMQ purge is.
func kindPurge(ctx context.Context, t *kindTarget, force bool) error {
	q, err := t.open()
	if err != nil {
		return err
	}
	a, err := capability[queues.Purger](q, "purge")
	if err != nil {
		return err
	}
	n, err := guarded(ctx, t.IO, t.Address, force, "not purged", purgeQuestion(t.Address),
		func(most int64) (int64, error) {
			n, err := a.Purge(ctx, most)
			if held := (*queues.NotEmptyError)(nil); errors.As(err, &held) {
				return held.Held, delayq.ErrQueueNotEmpty
			}
			return n, kindErr(err, t.Address)
		})
	if err != nil {
		return err
	}
	return purged(t.IO, t.JSON, n)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// oneLine shortens s to n runes on one line, for a table cell.
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// kindExportRun writes the jobs the filters select, one JSON object a
// line, to stdout or --file (written whole, then renamed into place). It
// is read-only: there is no import for other kinds (their library writes
// its jobs).
func kindExportRun(ctx context.Context, t *kindTarget, opts *exportOptions) error {
	file, err := createExport(t.IO.Out, opts.File)
	if err != nil {
		return err
	}
	defer file.abandon()
	w := iostreams.BufferLines(file.out, 256<<10)
	n, err := kindExport(ctx, t, &opts.Filter, func(v any) error { return iostreams.WriteJSONLine(w, v) })
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := file.commit(); err != nil {
		return err
	}
	infoTTY(t.IO, false, "exported %s of %s", plural(int64(n), "job"), t.Address)
	return nil
}
