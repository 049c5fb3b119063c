package conn

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/redis/go-redis/v9"
)

// normalizeURL percent-encodes the user and password of a URL written by
// hand, so that a password holding '#', '/', '?' or '@' reads as a password
// rather than as the URL's fragment, path or host (and so never shows up in
// a parse error as a "port"). A URL that parses without a fragment (which
// a Redis URL never has) is kept as written. Otherwise the userinfo runs
// from "://" to the last '@', and each part that does not decode cleanly is
// encoded; "%23" stays the encoded '#'.
func normalizeURL(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Fragment == "" && !strings.Contains(raw, "#") {
		return raw
	}
	i := strings.Index(raw, "://")
	if i < 0 {
		return raw
	}
	rest := raw[i+3:]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return raw
	}
	user, pass, hasPass := strings.Cut(rest[:at], ":")
	user, pass = decodeIfClean(user), decodeIfClean(pass)
	ui := url.User(user)
	if hasPass {
		ui = url.UserPassword(user, pass)
	}
	return raw[:i+3] + ui.String() + "@" + rest[at+1:]
}

func decodeIfClean(s string) string {
	if strings.ContainsAny(s, "/?#@[]") {
		return s
	}
	if d, err := url.PathUnescape(s); err == nil {
		return d
	}
	return s
}

// urlCredentials returns the user and password written in raw, if it
// parses.
func urlCredentials(raw string) (user, password string, ok bool) {
	u, err := url.Parse(normalizeURL(raw))
	if err != nil || u.User == nil {
		return "", "", err == nil
	}
	pw, _ := u.User.Password()
	return u.User.Username(), pw, true
}

// usesTLS reports whether the configuration asks for TLS, by --tls or a
// rediss:// URL.
func (c *Config) usesTLS() bool {
	return c.TLS || strings.HasPrefix(strings.ToLower(c.URL), "rediss://")
}

// tlsConfig builds the TLS settings redis-cli's flags describe, or nil
// without TLS. Verification is on unless --insecure; the server name is
// --sni, or else the host of each address dialled (so every cluster node
// and every master Sentinel names is verified by its own name).
func (c *Config) tlsConfig(io *iostreams.IOStreams) (*tls.Config, error) {
	if !c.usesTLS() {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.SNI}
	if c.CACert != "" {
		pem, err := os.ReadFile(c.CACert)
		if err != nil {
			return nil, withHint(usageErrorf("--cacert: %v", pathErr(err)), "give the PEM file of the CA that signed the server's certificate")
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, withHint(usageErrorf("--cacert %s: no PEM certificate in it", c.CACert), "give the PEM file of the CA that signed the server's certificate")
		}
		tc.RootCAs = pool
	}
	if c.Cert != "" {
		pair, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, withHint(usageErrorf("--cert/--key: %v", pathErr(err)), "give the client certificate and its private key as PEM files")
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	if c.Insecure {
		tc.InsecureSkipVerify = true
		if io != nil {
			io.Infof("warning: --insecure: the server's certificate is not verified; anyone on the path can read and change this connection")
		}
	}
	return tc, nil
}

// pathErr drops the operation from a file error: "open x: no such file"
// reads better as "x: no such file".
func pathErr(err error) string {
	var pe *os.PathError
	if e, ok := err.(*os.PathError); ok {
		pe = e
		return fmt.Sprintf("%s: %v", pe.Path, pe.Err)
	}
	return err.Error()
}

// TLSHandshakeError is a failed TLS handshake with Addr: a dial that
// reached the server, so the failure is about TLS (certificates, or a port
// that does not speak it), which the hints tell apart.
type TLSHandshakeError struct {
	Addr string
	Err  error
}

func (e *TLSHandshakeError) Error() string {
	return "TLS handshake with " + e.Addr + ": " + e.Err.Error()
}
func (e *TLSHandshakeError) Unwrap() error { return e.Err }

// ConnInitError is a failure before the server's first reply, on any
// connection of the client (initHook) or on the one a command was to go
// out on (initConn): no command of chatq's was sent, so nothing can have
// been applied (see ReplyLost).
type ConnInitError struct {
	Err error
	// Spoke: another connection of the client had had a reply, so the
	// server there does speak Redis (no TLS mismatch, say): this one
	// failed for another reason (a restart; a proxy without its server).
	Spoke bool
}

func (e *ConnInitError) Error() string { return e.Err.Error() }
func (e *ConnInitError) Unwrap() error { return e.Err }

// Timeout keeps go-redis's view of a timed-out read.
func (e *ConnInitError) Timeout() bool {
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout()
}

// Temporary is part of net.Error.
func (e *ConnInitError) Temporary() bool { return false }

// initConn notes in replied when the server has sent the first line of a
// reply: a RESP type byte, then a newline. Until some connection of a
// client has, no command of chatq's was sent: go-redis sends HELLO on each
// new connection and waits for its reply before anything else. A server
// that is not Redis there (a TLS port, say, which answers with an alert
// record and closes) never gets that far.
type initConn struct {
	net.Conn
	replied *atomic.Bool
	state   int // 0: nothing read; 1: a RESP type byte; 2: a whole first line; -1: not RESP
}

func (c *initConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	for _, ch := range b[:n] {
		if c.state == 0 {
			c.state = -1
			if strings.IndexByte("+-:$*%>_#,(=~|!", ch) >= 0 {
				c.state = 1
			}
		} else if c.state == 1 && ch == '\n' {
			c.state = 2
			c.replied.Store(true)
		}
		if c.state != 1 {
			break
		}
	}
	if err != nil && c.state != 2 {
		// No reply yet on this connection: go-redis sends only its
		// handshake (HELLO) before the first reply, so no command of
		// chatq's went out on it, whatever other connections of the
		// client have seen. A proxy that accepts and then finds no
		// server behind it closes a connection just so.
		err = &handshakeError{&ConnInitError{Err: err, Spoke: c.replied.Load()}}
	}
	return n, err
}

// handshakeError is a read error on a connection that has had no reply
// yet: a ConnInitError one layer down, because go-redis unwraps the error
// of a failed handshake once before returning it.
type handshakeError struct{ err *ConnInitError }

func (e *handshakeError) Error() string { return e.err.Error() }
func (e *handshakeError) Unwrap() error { return e.err }

// socketConn is an initConn straight on a socket (no TLS), which it lets
// go-redis see: before handing out an idle connection, go-redis's pool peeks
// at its socket (syscall.Conn) and drops it if the server has closed it, so
// that no request goes out on a connection a restart broke (its "reply"
// would be lost, and a write would end as "may have applied", exit 4).
// Hidden behind a wrapper, every idle connection looks healthy. A TLS
// connection is not checked (go-redis's choice too: data waiting on the
// socket may be a TLS record rather than a closed connection); after an
// outage, Probe finds its broken connections.
type socketConn struct{ initConn }

func (c *socketConn) SyscallConn() (syscall.RawConn, error) {
	sc, ok := c.Conn.(syscall.Conn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return sc.SyscallConn()
}

// dialer dials addr, with TLS when tc is set, within timeout: the TLS
// handshake's errors name it, and a connection's errors before its first
// reply are ConnInitErrors. The server name, unless --sni gives one, is the
// host dialled.
func dialer(tc *tls.Config, timeout time.Duration, replied *atomic.Bool) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		d := &net.Dialer{KeepAlive: 5 * time.Minute}
		raw, err := d.DialContext(ctx, network, addr)
		if err != nil || tc == nil {
			if err != nil {
				if replied.Load() {
					// Refused after the server had spoken: a
					// restart, and nothing was sent (retryHook).
					err = &ConnInitError{Err: err, Spoke: true}
				}
				return nil, err
			}
			return &socketConn{initConn{Conn: raw, replied: replied}}, nil
		}
		cfg := tc.Clone()
		if cfg.ServerName == "" {
			host, _, err := net.SplitHostPort(addr)
			if err != nil {
				host = addr
			}
			cfg.ServerName = host
		}
		conn := tls.Client(raw, cfg)
		if err := conn.HandshakeContext(ctx); err != nil {
			raw.Close()
			return nil, &TLSHandshakeError{Addr: addr, Err: err}
		}
		return &initConn{Conn: conn, replied: replied}, nil
	}
}

// initHook marks the errors of commands that failed before the server's
// first reply as ConnInitErrors.
type initHook struct{ replied *atomic.Bool }

func (h initHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h initHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if err != nil && !h.replied.Load() {
			err = &ConnInitError{Err: err}
			cmd.SetErr(err)
		}
		return err
	}
}

func (h initHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if err != nil && !h.replied.Load() {
			for _, c := range cmds {
				if c.Err() != nil {
					c.SetErr(&ConnInitError{Err: c.Err()})
				}
			}
			err = &ConnInitError{Err: err}
		}
		return err
	}
}
