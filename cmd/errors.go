package cmd

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
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitNothing     = 3
	exitInterrupted = 130
)

// ErrNothing is returned by a command that succeeded with nothing to return
// (an empty pop, an empty poll, no pending messages). It exits 0, or 3 with
// the global --exit-status flag.
var ErrNothing = errors.New("nothing to return")

// usageError marks a mistake in how chatq was called: exit 2, with usage.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usageErrorf builds a usage error (exit 2).
func usageErrorf(format string, a ...any) error {
	return &usageError{fmt.Errorf(format, a...)}
}

// hintError carries a suggestion printed as "chatq: hint: …".
type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string { return e.err.Error() }
func (e *hintError) Unwrap() error { return e.err }

// withHint attaches a hint to err.
func withHint(err error, hint string) error {
	if err == nil {
		return nil
	}
	return &hintError{err: err, hint: hint}
}

// exitCode maps an error returned by a command to the process exit code.
func exitCode(err error, exitStatus bool) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, ErrNothing):
		if exitStatus {
			return exitNothing
		}
		return exitOK
	case errors.As(err, &ue), errors.Is(err, names.ErrInvalid):
		return exitUsage
	default:
		return exitError
	}
}

// hintFor returns the hint for err, from a hintError or from the kind of
// failure, or "" when none helps.
func hintFor(err error) string {
	var he *hintError
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
