// Package clierr holds the kinds of error by which chatq chooses its exit
// code and what it prints after the error: a mistake in how chatq was
// called (exit 2, with the usage line), a refusal to act that is no such
// mistake (exit 2, no usage line: a bad configuration, a destructive
// command not confirmed), a hint, and a write that may have been applied
// (exit 4). It imports only the standard library, so that the connection
// layer (internal/cli/conn) and the commands' helpers (internal/cli/cmdutil)
// build and recognise the same types; cmdutil maps them to exit codes.
package clierr

import (
	"errors"
	"fmt"
)

// UsageError is a mistake in how chatq was called: exit 2, followed by
// the command's usage line.
type UsageError struct{ err error }

func (e *UsageError) Error() string { return e.err.Error() }
func (e *UsageError) Unwrap() error { return e.err }

// Usage marks err as a usage error.
func Usage(err error) error { return &UsageError{err} }

// Usagef builds a usage error.
func Usagef(format string, a ...any) error { return &UsageError{fmt.Errorf(format, a...)} }

// IsUsage reports whether err is a usage error (refusals included).
func IsUsage(err error) bool { return errors.As(err, new(*UsageError)) }

// refusedError is a usage error that is not in how the command was
// called: a bad configuration, or a destructive command not confirmed
// (off a terminal without its --force, or declined at the question). It
// exits 2, as nothing was changed, but prints no usage line.
type refusedError struct{ err error }

func (e *refusedError) Error() string { return e.err.Error() }
func (e *refusedError) Unwrap() error { return e.err }

// Refused marks err as a refusal (exit 2, no usage line).
func Refused(err error) error { return &refusedError{Usage(err)} }

// Refusedf builds a refusal (exit 2, no usage line).
func Refusedf(format string, a ...any) error { return Refused(fmt.Errorf(format, a...)) }

// IsRefused reports whether err is a refusal.
func IsRefused(err error) bool { return errors.As(err, new(*refusedError)) }

// HintError carries a suggestion printed as "chatq: hint: …".
type HintError struct {
	err  error
	hint string
}

func (e *HintError) Error() string { return e.err.Error() }
func (e *HintError) Unwrap() error { return e.err }

// Hint is the suggestion e carries.
func (e *HintError) Hint() string { return e.hint }

// WithHint attaches a hint to err (nil stays nil).
func WithHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &HintError{err: err, hint: hint}
}

// Hint returns the hint err carries, or "": the outermost HintError's, or
// that of a command's own error type that works its hint out (a Hint
// method, as queue work's drain error has); else, for a write that may
// have been applied, how to check it before retrying.
func Hint(err error) string {
	var h interface{ Hint() string }
	if errors.As(err, &h) {
		return h.Hint()
	}
	var ma *maybeAppliedError
	if errors.As(err, &ma) {
		return ma.checkHint()
	}
	return ""
}

// maybeAppliedError is a write whose effect is uncertain or whose output
// failed: exit 4. lost is a request that reached the connection but whose
// reply never came back (the server may have applied it); otherwise the
// write was made and only --jq or --template failed on its output, which
// must not exit 1 (nothing changed) and invite a retry.
type maybeAppliedError struct {
	err   error
	check string // the command line that shows whether it was applied
	lost  bool
}

func (e *maybeAppliedError) Error() string {
	if e.lost {
		return e.err.Error() + ": the request was sent but its reply was lost, so the server may have applied it"
	}
	return e.err.Error() + "; the command itself succeeded: its change was made, only its output could not be printed"
}
func (e *maybeAppliedError) Unwrap() error { return e.err }

// checkHint says how to check before retrying. It is not a Hint method, so
// that a hint the write's error carries comes first (see Hint).
func (e *maybeAppliedError) checkHint() string {
	if !e.lost {
		h := "do not run it again to see the output: the change is made"
		if e.check != "" {
			h += fmt.Sprintf("; `%s` shows the result", e.check)
		}
		return h + "; try an expression on `-o json` output first"
	}
	if e.check == "" {
		return "check the server's state before retrying, so that a retry does not apply it twice"
	}
	return fmt.Sprintf("check with `%s` before retrying, so that a retry does not apply it twice", e.check)
}

// MaybeApplied marks err, a write whose reply was lost, as maybe applied
// (exit 4); check is the command line that shows whether it was.
func MaybeApplied(err error, check string) error {
	if IsMaybeApplied(err) {
		return err
	}
	return &maybeAppliedError{err: err, check: check, lost: true}
}

// OutputFailed marks err, --jq or --template failing on the output of a
// write that was made, as exit 4; check shows the result.
func OutputFailed(err error, check string) error {
	return &maybeAppliedError{err: err, check: check}
}

// IsMaybeApplied reports whether err is a write that may have been
// applied, or was and only its output failed (exit 4).
func IsMaybeApplied(err error) bool { return errors.As(err, new(*maybeAppliedError)) }
