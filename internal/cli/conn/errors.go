package conn

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"

	"github.com/chatq-dev/chatq/internal/cli/clierr"
	"github.com/redis/go-redis/v9"
)

// A wrong setting is a usage error (exit 2) of internal/cli/clierr, most
// with a hint; a bad configuration is a refusal there too (see
// ConfigError).
var (
	usageErrorf = clierr.Usagef
	withHint    = clierr.WithHint
)

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
