package queue

import (
	"slices"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/search"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// filterFlags are the filters of peek and export (--state, --older-than,
// --grep and --regexp, --min-receives, --inflight-for); retry's selection
// takes the last two.
type filterFlags struct {
	State       string
	OlderThan   *time.Duration // --older-than, if given
	Search      search.Flags
	MinReceives int
	InFlightFor *time.Duration // --inflight-for, if given

	olderThan, inflightFor time.Duration // the flags' values
}

// addState adds --state and --older-than to cmd.
func (ff *filterFlags) addState(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&ff.State, "state", "", "only messages in this state: ready, delayed or inflight")
	fl.DurationVar(&ff.olderThan, "older-than", 0, "only messages sent longer ago than this (e.g. 10m, 2h)")
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions(peekStates, cobra.ShellCompDirectiveNoFileComp))
}

// addSelect adds --min-receives and --inflight-for to fl.
func (ff *filterFlags) addSelect(fl *pflag.FlagSet) {
	fl.IntVar(&ff.MinReceives, "min-receives", 0, "only messages received at least N times")
	fl.DurationVar(&ff.inflightFor, "inflight-for", 0, "only messages in flight whose first receive was longer ago than this (e.g. 10m)")
}

// read takes the durations given on the command line (after parsing).
func (ff *filterFlags) read(fl *pflag.FlagSet) {
	ff.OlderThan = given(fl, "older-than", ff.olderThan)
	ff.InFlightFor = given(fl, "inflight-for", ff.inflightFor)
}

// peekStates are the values of delayq.PeekOptions.State.
var peekStates = []string{"ready", "delayed", "inflight"}

// validate checks the filters without I/O.
func (ff *filterFlags) validate() error {
	if ff.State != "" && !slices.Contains(peekStates, ff.State) {
		return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --state %q", ff.State),
			"want ready (due now), delayed (not due, never received) or inflight (held by a consumer)")
	}
	if ff.OlderThan != nil && *ff.OlderThan <= 0 {
		return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --older-than %s: must be positive", *ff.OlderThan),
			"give an age such as 90s, 10m or 24h")
	}
	if ff.MinReceives < 0 {
		return cmdutil.UsageErrorf("invalid --min-receives %d: must not be negative", ff.MinReceives)
	}
	if ff.InFlightFor != nil {
		switch {
		case *ff.InFlightFor <= 0:
			return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --inflight-for %s: must be positive", *ff.InFlightFor),
				"give a time such as 10m: the messages first received longer ago than that and still in flight")
		case ff.State != "" && ff.State != "inflight":
			return cmdutil.WithHint(cmdutil.UsageErrorf("--inflight-for selects messages in flight, not %s ones", ff.State),
				"drop --state, or give --state inflight")
		}
	}
	_, _, err := ff.Search.Compile()
	return err
}

// selecting reports whether a search or selection flag was given: then
// the command reports how many messages it examined.
func (ff *filterFlags) selecting() bool {
	return ff.Search.Given() || ff.MinReceives > 0 || ff.InFlightFor != nil
}

// options are the filters as delayq takes them (validate checked them).
func (ff *filterFlags) options() delayq.PeekOptions {
	o := delayq.PeekOptions{State: ff.State, MinReceives: ff.MinReceives}
	o.Grep, o.Regexp, _ = ff.Search.Compile()
	if ff.OlderThan != nil {
		o.OlderThan = *ff.OlderThan
	}
	if ff.InFlightFor != nil {
		o.InFlightFor = *ff.InFlightFor
	}
	return o
}

// deadLetteredJSON is the record of the dead-letter move that brought a
// message into its queue (peek, get, export and import):
// "dead_lettered":{"from":"jobs","rc":5,"at":1795268834364}, absent for
// other messages.
type deadLetteredJSON struct {
	From string `json:"from"`
	RC   int64  `json:"rc"`
	At   int64  `json:"at"`
}

func toDeadLettered(m delayq.Message) *deadLetteredJSON {
	if m.DeadLetteredFrom == "" {
		return nil
	}
	return &deadLetteredJSON{From: m.DeadLetteredFrom, RC: m.DeadLetteredRC, At: m.DeadLetteredAt.UnixMilli()}
}

// validateKind checks the filters a queue of another kind than RSMQ's
// takes: its states are chatq's six (the kind says which it has).
func (ff *filterFlags) validateKind() error {
	if ff.State != "" && !slices.Contains(queues.States, ff.State) {
		return cmdutil.WithHint(cmdutil.UsageErrorf("invalid --state %q", ff.State),
			"want one of "+strings.Join(queues.States, ", ")+" (docs/kinds.md maps each kind's own states onto them)")
	}
	if ff.MinReceives < 0 {
		return cmdutil.UsageErrorf("invalid --min-receives %d: must not be negative", ff.MinReceives)
	}
	return nil
}
