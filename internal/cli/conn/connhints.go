package conn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// FailureHint returns the hint for a connection or server failure, knowing
// the configuration it happened under (nil when none was loaded): TLS,
// authentication, ACL, the wrong kind of server, no server there, no
// answer in time; or "" when none helps.
func FailureHint(err error, cfg *Config, getenv func(string) string) string {
	err = cause(err)
	if cfg != nil {
		if h := connHint(err, cfg, getenv); h != "" {
			return h
		}
	}
	var ne net.Error
	switch {
	case speaksHTTP(err.Error()):
		return "that port speaks HTTP, not Redis: check the port in --url (CHATQ_URL); Redis listens on 6379 by default"
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

// connHint names the likely cause of a connection or server-side failure
// and what to change, or returns "".
func connHint(err error, cfg *Config, getenv func(string) string) string {
	msg := err.Error()
	var he *TLSHandshakeError
	var ua x509.UnknownAuthorityError
	var hn x509.HostnameError
	var ci x509.CertificateInvalidError
	var rh tls.RecordHeaderError
	var ne net.Error
	var spoke *ConnInitError
	switch {
	case errors.As(err, &ua):
		return "the server's certificate is signed by a CA this machine does not trust: give that CA's PEM file with --cacert FILE (CHATQ_CACERT); --insecure skips the check, for tests only"
	case errors.As(err, &hn):
		return "the server's certificate does not hold the name dialled: connect by a name it holds, or name the one to verify with --sni NAME (CHATQ_SNI)"
	case errors.As(err, &ci):
		return "the server's certificate is expired or not yet valid (or this machine's clock is wrong)"
	case strings.Contains(msg, "tls: certificate required"), strings.Contains(msg, "tls: bad certificate"),
		strings.Contains(msg, "tls: unknown certificate authority"), strings.Contains(msg, "tls: handshake failure") && cfg.Cert == "":
		return "the server requires a client certificate signed by a CA it trusts (tls-auth-clients): give it with --cert FILE --key FILE (CHATQ_CERT, CHATQ_KEY)"
	case cfg.usesTLS() && cfg.Cert == "" && !errors.As(err, &he) &&
		(errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, io.EOF)):
		// TLS 1.3 finishes the client's side of the handshake before the
		// server checks the client: its refusal arrives as a reset.
		return "the server closed the TLS connection: if it requires client certificates (tls-auth-clients), give one with --cert FILE --key FILE (CHATQ_CERT, CHATQ_KEY)"
	case errors.As(err, &he) && (errors.As(err, &rh) || errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, io.EOF)):
		return "the server does not speak TLS on that port: drop --tls and use redis://, or use the server's tls-port"
	case cfg.usesTLS() && (errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded)):
		return "the server did not answer within --timeout: if the port does not speak TLS, drop --tls and use redis://; else check --url, or raise --timeout"
	case errors.As(err, &spoke) && spoke.Spoke && errors.Is(err, syscall.ECONNREFUSED):
		return "the server refused new connections until --timeout, after earlier ones worked: it may be restarting (raise --timeout to wait longer); nothing was sent"
	case errors.As(err, &spoke) && spoke.Spoke:
		return "the server closed new connections before answering until --timeout, after earlier ones worked: it may be restarting, or a proxy in front of it may have lost it (raise --timeout to wait longer); nothing was sent"
	case !cfg.usesTLS() && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF)):
		return "the server closed the connection at once: if it expects TLS, use rediss:// or --tls (CHATQ_TLS=true), with --cacert for a private CA"
	}

	code, _, _ := strings.Cut(redisMessage(msg), " ")
	sentinel := strings.Contains(msg, "all sentinels specified in configuration are unreachable")
	switch {
	case sentinel && strings.Contains(msg, "redis: nil"):
		return fmt.Sprintf("no Sentinel at --url monitors a master named %q: check --sentinel-master (`redis-cli -h HOST -p PORT SENTINEL MASTERS` lists the names)", cfg.SentinelMaster)
	case sentinel && strings.Contains(msg, "unknown command") && strings.Contains(msg, "get-master-addr-by-name"):
		return "--url is not a Sentinel: point it at the Sentinels (port 26379 by default), or drop --sentinel-master to use the server directly"
	case sentinel && (strings.Contains(msg, "NOAUTH") || strings.Contains(msg, "WRONGPASS")):
		return "the Sentinel needs its own password: set CHATQ_SENTINEL_PASSWORD (and CHATQ_SENTINEL_USER for an ACL user), or sentinel-password in the config file; the URL's password is the master's"
	case code == "WRONGPASS":
		return fmt.Sprintf("the user or password is wrong, or the user is disabled: user %q, password from %s (see `chatq config`)",
			cfg.userName(), cfg.PasswordSource(getenv))
	case code == "NOAUTH":
		return "the server needs a password: give it with --askpass, CHATQ_PASSWORD or the config file's password key (never on the command line)"
	case permissionDenied(msg):
		return "the ACL user lacks a permission chatq needs (`ACL LOG 1` on the server names the command, key or channel): `chatq acl --user " +
			cfg.userName() + "` prints the ACL SETUSER line chatq needs; run it with this command's --prefix and --namespace"
	case code == "MOVED" || code == "ASK" || code == "CLUSTERDOWN" || code == "CROSSSLOT":
		if cfg.Cluster {
			return ""
		}
		return "--url is a Redis Cluster node: add --cluster (CHATQ_CLUSTER=true), with ?addr=host:port for more seeds"
	case strings.Contains(msg, "cluster support disabled"):
		return "the server is not a Redis Cluster node: drop --cluster (CHATQ_CLUSTER)"
	case code == "READONLY":
		return "the server is a read-only replica: point --url at the master, or find the master through Sentinel with --sentinel-master NAME"
	case code == "LOADING":
		return "the server is loading its data set into memory after a restart: retry when it is done (`chatq ping` answers then)"
	case code == "MASTERDOWN":
		return "the replica has lost its master: point --url at the master, or use --sentinel-master NAME to follow failovers"
	case code == "ERR" && strings.Contains(msg, "DB index is out of range"):
		return fmt.Sprintf("the server has no database %d (it has as many as `CONFIG GET databases` says, 16 by default: 0 to 15): give a lower number in the URL's /N or --db (CHATQ_DB)", cfg.db())
	case code == "ERR" && strings.Contains(msg, "SELECT is not allowed in cluster mode"):
		return "a Redis Cluster has only database 0: drop the URL's /N and --db (CHATQ_DB)"
	case code == "ERR" && strings.Contains(msg, "unknown command") && cfg.SentinelMaster == "":
		what := "this command"
		// 'name' on Redis 7 and Valkey, `name` on 6.2
		if _, rest, ok := strings.Cut(msg, "unknown command "); ok && rest != "" {
			if name, _, ok := strings.Cut(rest[1:], rest[:1]); ok {
				what = strings.ToUpper(name)
			}
		}
		return "the server does not know " + what + ": if --url names a Sentinel (`chatq ping` says), add --sentinel-master NAME to reach its master; " +
			"else the server lacks it (renamed or disabled, as some managed services do): docs/compatibility.md says what chatq needs"
	case strings.Contains(msg, "nknown Redis command called from") || strings.Contains(msg, "Invalid command passed to redis.acl_check_cmd"):
		return "a chatq script called a command this server lacks (renamed or disabled, as some managed services do): docs/compatibility.md says what chatq needs"
	}
	return ""
}

// redisMessage returns the server's error within a wrapped message: the
// part from its first upper-case error code on.
func redisMessage(msg string) string {
	for _, code := range []string{"WRONGPASS", "NOAUTH", "NOPERM", "MOVED", "ASK", "CLUSTERDOWN", "CROSSSLOT", "READONLY", "LOADING", "MASTERDOWN", "ERR"} {
		if strings.HasPrefix(msg, code+" ") {
			return msg
		}
		if i := strings.Index(msg, ": "+code+" "); i >= 0 {
			return msg[i+2:]
		}
	}
	return msg
}

// db is the database number chatq selects: --db, else the URL's /N.
func (c *Config) db() int {
	if c.DBSet {
		return c.DB
	}
	if u, err := url.Parse(normalizeURL(c.URL)); err == nil {
		if n, err := strconv.Atoi(strings.Trim(u.Path, "/")); err == nil {
			return n
		}
	}
	return 0
}

// userName is the ACL user chatq authenticates as.
func (c *Config) userName() string {
	if c.User != "" {
		return c.User
	}
	if u, _, ok := urlCredentials(c.URL); ok && u != "" {
		return u
	}
	return "default"
}

// permHook adds to a server's ACL refusal the command and keys it was
// refused for, which the server's message leaves out.
type permHook struct{}

func (permHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (permHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err != nil {
			err = annotatePerm(cmd, err)
		}
		return err
	}
}

func (permHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			if c.Err() != nil {
				annotatePerm(c, c.Err())
			}
		}
		return err
	}
}

// permError is a server's ACL refusal with what it was refused for. It
// stays a redis.Error, so callers treat it as the server's reply.
type permError struct {
	err  redis.Error
	what string
}

func (e *permError) Error() string { return e.err.Error() + " (" + e.what + ")" }
func (e *permError) Unwrap() error { return e.err }
func (e *permError) RedisError()   {}

func annotatePerm(cmd redis.Cmder, err error) error {
	var re redis.Error
	if !errors.As(err, &re) {
		return err
	}
	if _, done := err.(*permError); done {
		return err
	}
	m := re.Error()
	if !permissionDenied(m) {
		return err
	}
	name := cmd.FullName()
	var keys []string
	args := cmd.Args()
	switch strings.ToLower(cmd.Name()) {
	case "evalsha", "eval", "evalsha_ro", "eval_ro":
		if len(args) > 2 {
			if n, ok := args[2].(int); ok && n > 0 && len(args) >= 3+n {
				for _, k := range args[3 : 3+n] {
					keys = append(keys, fmt.Sprint(k))
				}
			}
		}
	default:
		if len(args) > 1 && !strings.Contains(name, "|") {
			keys = append(keys, fmt.Sprint(args[1]))
		}
	}
	what := "command " + name
	switch {
	case len(keys) > 0 && strings.HasPrefix(strings.ToLower(cmd.Name()), "eval"):
		what += ", keys " + strings.Join(keys, " ")
	case len(keys) > 0:
		what += " " + keys[0]
	}
	pe := &permError{err: re, what: what}
	cmd.SetErr(pe)
	return pe
}

// speaksHTTP reports whether msg is go-redis's "invalid reply" to an HTTP
// server's answer (a status line, a page, a header).
func speaksHTTP(msg string) bool {
	_, reply, ok := strings.Cut(msg, "invalid reply: ")
	if !ok {
		return false
	}
	reply = strings.ToUpper(strings.TrimLeft(reply, `"`))
	for _, p := range []string{"HTTP/", "<!DOCTYPE", "<HTML", "CONTENT-", "SERVER:", "DATE:"} {
		if strings.HasPrefix(reply, p) {
			return true
		}
	}
	return false
}
