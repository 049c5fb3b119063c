package cmdutil

import (
	"errors"
	"fmt"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/names"
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

// UsageError marks a mistake in how chatq was called: exit 2, with usage.
type UsageError struct{ err error }

func (e *UsageError) Error() string { return e.err.Error() }
func (e *UsageError) Unwrap() error { return e.err }
func (e *UsageError) Usage() bool   { return true }

// UsageErr marks err as a usage error (exit 2).
func UsageErr(err error) error { return &UsageError{err} }

// UsageErrorf builds a usage error (exit 2).
func UsageErrorf(format string, a ...any) error {
	return &UsageError{fmt.Errorf(format, a...)}
}

// HintError carries a suggestion printed as "chatq: hint: …".
type HintError struct {
	err  error
	hint string
}

func (e *HintError) Error() string { return e.err.Error() }
func (e *HintError) Unwrap() error { return e.err }
func (e *HintError) Hint() string  { return e.hint }

// WithHint attaches a hint to err.
func WithHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &HintError{err: err, hint: hint}
}

// maybeAppliedError is a write whose request reached the connection but whose
// reply never came back: the server may have applied it. It exits 4.
type maybeAppliedError struct {
	err   error
	check string
}

func (e *maybeAppliedError) Error() string {
	return e.err.Error() + ": the request was sent but its reply was lost, so the server may have applied it"
}
func (e *maybeAppliedError) Unwrap() error { return e.err }

// checkHint says how to check before retrying. It is not a Hint method, so
// that a hint the lost write's error carries comes first (see HintFor).
func (e *maybeAppliedError) checkHint() string {
	if e.check == "" {
		return "check the server's state before retrying, so that a retry does not apply it twice"
	}
	return fmt.Sprintf("check with `%s` before retrying, so that a retry does not apply it twice", e.check)
}

// appliedFilterError is --jq or --template failing on the output of a
// command that writes: the write was made, so it must not exit 1 (which
// says nothing changed) and invite a retry. It exits 4, whose "check before
// retrying" is what a script must do.
type appliedFilterError struct {
	err   error
	check string
}

func (e *appliedFilterError) Error() string {
	return e.err.Error() + "; the command itself succeeded: its change was made, only its output could not be printed"
}
func (e *appliedFilterError) Unwrap() error { return e.err }

func (e *appliedFilterError) checkHint() string {
	h := "do not run it again to see the output: the change is made"
	if e.check != "" {
		h += fmt.Sprintf("; `%s` shows the result", e.check)
	}
	return h + "; try an expression on `-o json` output first"
}

// MaybeApplied turns err into a maybeAppliedError when cmd writes and err
// says that a reply was lost after its request was sent, or into an
// appliedFilterError when cmd writes and only --jq or --template failed;
// otherwise it returns err.
func MaybeApplied(cmd *cobra.Command, err error) error {
	if cmd == nil || err == nil {
		return err
	}
	check, ok := cmd.Annotations[writeAnnotation]
	check = fillCheck(cmd, check)
	if ok && errors.As(err, new(*jsonfilter.RuntimeError)) {
		return &appliedFilterError{err: err, check: check}
	}
	if !ok || !conn.ReplyLost(err) {
		return err
	}
	var ma *maybeAppliedError
	if errors.As(err, &ma) {
		return err
	}
	return &maybeAppliedError{err: err, check: check}
}

// HintFor returns the hint for err, or "" when none helps: the hint the
// error carries (a HintError's, or any error's with a Hint() string method,
// such as internal/cli/conn's for a bad setting), else for a write whose reply
// was lost how to check it, else the hint for a connection or server
// failure under the loaded configuration (see conn.FailureHint).
func (f *Factory) HintFor(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	var ma *maybeAppliedError
	if errors.As(err, &ma) {
		return ma.checkHint()
	}
	var af *appliedFilterError
	if errors.As(err, &af) {
		return af.checkHint()
	}
	return conn.FailureHint(err, f.cfg, f.Getenv)
}

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error, exitStatus bool) int {
	var ue interface{ Usage() bool }
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrNothing):
		if exitStatus {
			return ExitNothing
		}
		return ExitOK
	case errors.As(err, &ue) && ue.Usage(), errors.Is(err, names.ErrInvalid):
		return ExitUsage
	case errors.As(err, new(*maybeAppliedError)), errors.As(err, new(*appliedFilterError)):
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

// refusedError is a destructive command that was not confirmed: off a
// terminal without its --force, or declined at the question. It exits 2
// like a usage error (nothing was changed) but prints no usage line: the
// command was called correctly.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// Refusedf builds a refusedError (exit 2).
func Refusedf(format string, a ...any) error {
	return &refusedError{UsageErrorf(format, a...)}
}

// IsRefused reports whether err is a refusedError.
func IsRefused(err error) bool { return errors.As(err, new(*refusedError)) }

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
