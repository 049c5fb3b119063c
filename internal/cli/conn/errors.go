package conn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"

	"github.com/redis/go-redis/v9"
)

// A wrong setting is an error of how chatq was called or configured. conn
// cannot use cmdutil's error types (cmdutil imports conn), so its errors say
// what they are by their methods: Usage() reports a usage mistake (exit 2)
// and Hint() the suggestion printed after the error. cmdutil's exit codes
// and hints recognise any error with these methods.

// usageError is a mistake in the settings: exit 2.
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }
func (e *usageError) Usage() bool   { return true }

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
func (e *hintError) Hint() string  { return e.hint }

func withHint(err error, hint string) error {
	return &hintError{err: err, hint: hint}
}

// ReplyLost reports whether err is a failure reading a reply: the request
// was written, so the server may have run it. A failure to dial or to write
// the whole request is not: Redis runs only complete commands.
func ReplyLost(err error) bool {
	// A failed TLS handshake or a new connection's first reply (HELLO's)
	// comes before any command was sent.
	if errors.As(err, new(*TLSHandshakeError)) || errors.As(err, new(*ConnInitError)) {
		return false
	}
	if errors.As(err, new(*lostReply)) {
		return true
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Op == "read"
	}
	return errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, redis.ErrPoolTimeout)
}

// PermissionDenied reports whether err is a server's ACL refusal, in the
// wording of each server: NOPERM for a command sent alone (and for chatq's
// own scripts, which check first on Redis 7 and Valkey); for a command a
// script runs, "The user executing the script can't …" on Redis 6.2 and
// 7.0, and "ACL failure in script: …" on Redis 7.2 and newer and on Valkey
// (docs/compatibility.md).
func PermissionDenied(err error) bool {
	if err == nil {
		return false
	}
	return permissionDenied(err.Error())
}

func permissionDenied(msg string) bool {
	m := redisMessage(msg)
	return strings.HasPrefix(m, "NOPERM") || strings.Contains(m, "The user executing the script ") ||
		strings.Contains(m, "ACL failure in script: ")
}

// UnknownCommand reports whether err is a server's refusal of a command it
// does not have: renamed or disabled, as managed services do, or one a
// Sentinel or an older server lacks.
func UnknownCommand(err error) bool {
	return err != nil && strings.HasPrefix(redisMessage(err.Error()), "ERR unknown command")
}
