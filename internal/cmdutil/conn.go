package cmdutil

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"
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
func (c *Config) tlsConfig(io *IOStreams) (*tls.Config, error) {
	if !c.usesTLS() {
		return nil, nil
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.SNI}
	if c.CACert != "" {
		pem, err := os.ReadFile(c.CACert)
		if err != nil {
			return nil, WithHint(UsageErrorf("--cacert: %v", pathErr(err)), "give the PEM file of the CA that signed the server's certificate")
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, WithHint(UsageErrorf("--cacert %s: no PEM certificate in it", c.CACert), "give the PEM file of the CA that signed the server's certificate")
		}
		tc.RootCAs = pool
	}
	if c.Cert != "" {
		pair, err := tls.LoadX509KeyPair(c.Cert, c.Key)
		if err != nil {
			return nil, WithHint(UsageErrorf("--cert/--key: %v", pathErr(err)), "give the client certificate and its private key as PEM files")
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

// tlsDialer dials addr and does the TLS handshake within timeout, naming
// the handshake in its errors. The server name, unless --sni gives one, is
// the host dialled.
func tlsDialer(tc *tls.Config, timeout time.Duration) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		d := &net.Dialer{KeepAlive: 5 * time.Minute}
		raw, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
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
		return conn, nil
	}
}
