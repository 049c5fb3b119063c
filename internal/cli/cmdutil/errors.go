package cmdutil

import (
	"errors"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/chatq-dev/chatq/internal/cli/clierr"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/jsonfilter"
	"github.com/spf13/cobra"
)

// Exit codes, documented in `chatq --help` and the README.
const (
	ExitOK      = 0
	ExitError   = 1
	ExitUsage   = 2
	ExitNothing = 3
	// ExitMaybeApplied: a write was sent but its reply was lost, so the
	// server may have applied it; exit 1 on a write means it was not.
	ExitMaybeApplied = 4
	ExitInterrupted  = 130
	// exitBreached: a health check (queue check) found a threshold
	// breached; its error has a Breached() bool method.
	exitBreached = 5
	// exitJobsFailed: a drain (queue work --until-empty or --max-jobs) ran
	// jobs that failed or timed out; its error has a JobsFailed() bool
	// method.
	exitJobsFailed = 6
)

// ErrNothing is returned by a command that succeeded with nothing to return
// (an empty pop, an empty poll, no pending messages). It exits 0, or 3 with
// the global --exit-status flag.
var ErrNothing = errors.New("nothing to return")

// HintError is the error kind that carries a hint (clierr.HintError).
type HintError = clierr.HintError

// The error kinds commands build, from internal/cli/clierr, which the
// connection layer shares: a usage error (exit 2), a hint, a refusal
// (exit 2, no usage line).
var (
	// UsageErr marks err as a usage error (exit 2).
	UsageErr = clierr.Usage
	// UsageErrorf builds a usage error (exit 2).
	UsageErrorf = clierr.Usagef
	// WithHint attaches a hint to err.
	WithHint = clierr.WithHint
	// Refusedf builds a refusal: a destructive command not confirmed
	// (exit 2, no usage line: the command was called correctly).
	Refusedf = clierr.Refusedf
	// IsRefused reports whether err is a refusal.
	IsRefused = clierr.IsRefused
)

// MaybeApplied marks err as maybe applied (exit 4) when cmd writes and err
// says that a reply was lost after its request was sent, or when cmd writes
// and only --jq or --template failed; otherwise it returns err.
func MaybeApplied(cmd *cobra.Command, err error) error {
	if cmd == nil || err == nil {
		return err
	}
	check, ok := cmd.Annotations[writeAnnotation]
	check = fillCheck(cmd, check)
	if ok && errors.As(err, new(*jsonfilter.RuntimeError)) {
		return clierr.OutputFailed(err, check)
	}
	if !ok || !conn.ReplyLost(err) {
		return err
	}
	return clierr.MaybeApplied(err, check)
}

// HintFor returns the hint for err, or "" when none helps: the hint the
// error carries, else for a write that may have been applied how to check
// it (see clierr.Hint), else the hint for a connection or server failure
// under the loaded configuration (see conn.FailureHint).
func (f *Factory) HintFor(err error) string {
	if h := clierr.Hint(err); h != "" {
		return h
	}
	return conn.FailureHint(err, f.cfg, f.Getenv)
}

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error, exitStatus bool) int {
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrNothing):
		if exitStatus {
			return ExitNothing
		}
		return ExitOK
	case clierr.IsUsage(err), errors.Is(err, names.ErrInvalid):
		return ExitUsage
	case clierr.IsMaybeApplied(err):
		return ExitMaybeApplied
	case breached(err):
		return exitBreached
	case jobsFailed(err):
		return exitJobsFailed
	default:
		return ExitError
	}
}

// breached reports whether err says that a health check found a
// threshold breached.
func breached(err error) bool {
	var b interface{ Breached() bool }
	return errors.As(err, &b) && b.Breached()
}

// jobsFailed reports whether err says that a drain's jobs failed.
func jobsFailed(err error) bool {
	var j interface{ JobsFailed() bool }
	return errors.As(err, &j) && j.JobsFailed()
}

// fillCheck puts the names the command was given in place of the check
// command's placeholders, so that the hint names the queue, list, chat or
// user at hand: QUEUE, DLQ, KEY and CHAT are the first argument; USER is
// --from when the command has it, else the first argument.
func fillCheck(cmd *cobra.Command, check string) string {
	args := cmd.Flags().Args()
	if len(args) == 0 || check == "" {
		return check
	}
	shell := func(s string) string {
		if s != "" && !strings.ContainsAny(s, " \t\n'\"$`\\*?[]{}()<>|&;#~") {
			return s
		}
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	words := strings.Fields(check)
	for i, w := range words {
		switch w {
		case "QUEUE", "DLQ", "KEY", "CHAT":
			words[i] = shell(args[0])
		case "USER":
			if from, err := cmd.Flags().GetString("from"); err == nil && from != "" {
				words[i] = shell(from)
			} else if !strings.HasPrefix(cmd.Name(), "create") {
				words[i] = shell(args[0])
			}
		}
	}
	return strings.Join(words, " ")
}
