package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"

	"github.com/chatq-dev/chatq/internal/names"
)

// Exit codes, documented in `chatq --help` and the README.
const (
	ExitOK          = 0
	ExitError       = 1
	ExitUsage       = 2
	ExitNothing     = 3
	ExitInterrupted = 130
)

// ErrNothing is returned by a command that succeeded with nothing to return
// (an empty pop, an empty poll, no pending messages). It exits 0, or 3 with
// the global --exit-status flag.
var ErrNothing = errors.New("nothing to return")

// UsageError marks a mistake in how chatq was called: exit 2, with usage.
type UsageError struct{ err error }

func (e *UsageError) Error() string { return e.err.Error() }
func (e *UsageError) Unwrap() error { return e.err }

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

// WithHint attaches a hint to err.
func WithHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &HintError{err: err, hint: hint}
}

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error, exitStatus bool) int {
	var ue *UsageError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, ErrNothing):
		if exitStatus {
			return ExitNothing
		}
		return ExitOK
	case errors.As(err, &ue), errors.Is(err, names.ErrInvalid):
		return ExitUsage
	default:
		return ExitError
	}
}

// HintFor returns the hint for err, from a HintError or from the kind of
// failure, or "" when none helps.
func HintFor(err error) string {
	var he *HintError
	if errors.As(err, &he) {
		return he.hint
	}
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ENOENT) && isDialError(err):
		return "is Redis running there? start one with `chatq dev`, or point --url (CHATQ_URL) at your server"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "the server did not answer within --timeout; check --url, or raise --timeout"
	}
	return ""
}

func isDialError(err error) bool {
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "dial"
}
