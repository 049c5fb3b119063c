// Package webconfig reads the web configuration file of Prometheus
// exporters (exporter-toolkit's --web.config.file: TLS and basic auth) for
// chatq metrics --web-config, and applies it: a tls.Config for the
// listener and a handler that asks for a user and password.
//
// It takes the keys chatq serves with and refuses every other, naming it:
//
//	tls_server_config:
//	  cert_file: server.crt      # PEM; relative paths are from the file's directory
//	  key_file: server.key
//	  client_auth_type: RequireAndVerifyClientCert   # default NoClientCert
//	  client_ca_file: ca.crt
//	  min_version: TLS12         # TLS10, TLS11, TLS12 (default) or TLS13
//	basic_auth_users:
//	  prometheus: $2y$10$…       # a bcrypt hash, never the password
//
// It is written on crypto/tls and x/crypto/bcrypt rather than taken from
// prometheus/exporter-toolkit, whose dependencies (go-kit's logging,
// x/net, prometheus/common's config with its HTTP client side) chatq would
// link for five keys.
package webconfig

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"
)

// Config is a loaded web configuration.
type Config struct {
	// TLS, when not nil, is the listener's TLS configuration; nil means
	// plain HTTP.
	TLS *tls.Config
	// users are the bcrypt hashes of the basic auth users' passwords; none
	// means no authentication.
	users map[string][]byte
	// dummy is compared against when the user is unknown, so that a
	// wrong user takes as long as a wrong password.
	dummy []byte
}

// Error is a mistake in the file: the field (dotted, as in the file) and
// what is wrong with it, and a hint when one helps.
type Error struct {
	Field   string
	Problem string
	Hint    string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Problem
	}
	return e.Field + ": " + e.Problem
}

func errorf(field, hint, format string, a ...any) *Error {
	return &Error{Field: field, Problem: fmt.Sprintf(format, a...), Hint: hint}
}

// Load reads and checks the file at path: its certificates and keys are
// read, and the hashes parsed, so that a mistake is found at start. Paths
// in it are relative to its directory. Its errors are *Error, but for
// reading path itself.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data, filepath.Dir(path))
}

// The file's shape. The nodes are kept to name the unknown keys.
type fileTLS struct {
	CertFile       string `yaml:"cert_file"`
	KeyFile        string `yaml:"key_file"`
	ClientAuthType string `yaml:"client_auth_type"`
	ClientCAFile   string `yaml:"client_ca_file"`
	MinVersion     string `yaml:"min_version"`
}

var (
	topKeys = []string{"tls_server_config", "basic_auth_users"}
	tlsKeys = []string{"cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version"}
)

// Parse checks data, a web configuration, with relative paths taken from
// dir.
func Parse(data []byte, dir string) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, errorf("", "", "not YAML: %v", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	c := &Config{}
	if len(root.Content) == 0 {
		return c, nil // empty: plain HTTP, no users, as exporter-toolkit takes it
	}
	top, err := mapping(root.Content[0], "", topKeys)
	if err != nil {
		return nil, err
	}
	if n := top["tls_server_config"]; n != nil {
		if c.TLS, err = parseTLS(n, dir); err != nil {
			return nil, err
		}
	}
	if n := top["basic_auth_users"]; n != nil {
		if err := c.parseUsers(n); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// mapping returns the values of the mapping n by key, refusing a key not
// in known. field is n's own (dotted) name.
func mapping(n *yaml.Node, field string, known []string) (map[string]*yaml.Node, error) {
	where := field
	if where == "" {
		where = "the file"
	}
	if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
		return map[string]*yaml.Node{}, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, errorf(field, "", "line %d: %s must be a mapping (key: value lines)", n.Line, where)
	}
	out := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := dotted(field, k.Value)
		if known != nil && !slices.Contains(known, k.Value) {
			return nil, errorf(name, "chatq reads "+strings.Join(known, ", ")+" there",
				"line %d: unknown key", k.Line)
		}
		if _, dup := out[k.Value]; dup {
			return nil, errorf(name, "", "line %d: given twice", k.Line)
		}
		out[k.Value] = v
	}
	return out, nil
}

func dotted(field, key string) string {
	if field == "" {
		return key
	}
	return field + "." + key
}

// str is the string at n, for field.
func str(n *yaml.Node, field string) (string, error) {
	if n == nil {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		return "", errorf(field, "", "line %d: want a string", n.Line)
	}
	return n.Value, nil
}

var clientAuths = map[string]tls.ClientAuthType{
	"NoClientCert":               tls.NoClientCert,
	"RequestClientCert":          tls.RequestClientCert,
	"RequireAnyClientCert":       tls.RequireAnyClientCert,
	"VerifyClientCertIfGiven":    tls.VerifyClientCertIfGiven,
	"RequireAndVerifyClientCert": tls.RequireAndVerifyClientCert,
}

var tlsVersions = map[string]uint16{"TLS10": tls.VersionTLS10, "TLS11": tls.VersionTLS11, "TLS12": tls.VersionTLS12, "TLS13": tls.VersionTLS13}

func parseTLS(n *yaml.Node, dir string) (*tls.Config, error) {
	const field = "tls_server_config"
	m, err := mapping(n, field, tlsKeys)
	if err != nil {
		return nil, err
	}
	var f fileTLS
	for _, kv := range []struct {
		key string
		to  *string
	}{{"cert_file", &f.CertFile}, {"key_file", &f.KeyFile}, {"client_auth_type", &f.ClientAuthType}, {"client_ca_file", &f.ClientCAFile}, {"min_version", &f.MinVersion}} {
		if *kv.to, err = str(m[kv.key], dotted(field, kv.key)); err != nil {
			return nil, err
		}
	}
	// The values first, then the files.
	minVersion, clientAuth := uint16(tls.VersionTLS12), tls.NoClientCert
	switch {
	case f.CertFile == "" && f.KeyFile == "":
		return nil, errorf(field+".cert_file", "TLS needs cert_file and key_file (PEM); leave tls_server_config out to serve plain HTTP",
			"missing")
	case f.KeyFile == "":
		return nil, errorf(field+".key_file", "key_file is the private key of cert_file, in PEM: the two go together", "missing (cert_file is given)")
	case f.CertFile == "":
		return nil, errorf(field+".cert_file", "cert_file is the certificate of key_file, in PEM: the two go together", "missing (key_file is given)")
	}
	if f.MinVersion != "" {
		v, ok := tlsVersions[f.MinVersion]
		if !ok {
			return nil, errorf(field+".min_version", "one of TLS10, TLS11, TLS12, TLS13", "unknown version %q", f.MinVersion)
		}
		minVersion = v
	}
	if f.ClientAuthType != "" {
		a, ok := clientAuths[f.ClientAuthType]
		if !ok {
			return nil, errorf(field+".client_auth_type",
				"one of NoClientCert, RequestClientCert, RequireAnyClientCert, VerifyClientCertIfGiven, RequireAndVerifyClientCert",
				"unknown type %q", f.ClientAuthType)
		}
		clientAuth = a
	}
	certFile, keyFile := resolve(dir, f.CertFile), resolve(dir, f.KeyFile)
	if _, err := tls.LoadX509KeyPair(certFile, keyFile); err != nil {
		hint := "cert_file and key_file must be PEM files of one certificate (chain) and its private key"
		if errors.Is(err, fs.ErrNotExist) {
			hint = ""
		}
		return nil, errorf(field+".cert_file", hint, "%v", err)
	}
	cfg := &tls.Config{
		MinVersion: minVersion,
		ClientAuth: clientAuth,
		// Read on each handshake, as exporter-toolkit does, so that a
		// renewed certificate is served without a restart.
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			cert, err := tls.LoadX509KeyPair(certFile, keyFile)
			if err != nil {
				return nil, fmt.Errorf("reading %s and %s: %w", certFile, keyFile, err)
			}
			return &cert, nil
		},
	}
	if f.ClientCAFile != "" {
		pem, err := os.ReadFile(resolve(dir, f.ClientCAFile))
		if err != nil {
			return nil, errorf(field+".client_ca_file", "", "%v", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, errorf(field+".client_ca_file", "the CA certificates that sign the clients' certificates, in PEM", "no PEM certificate in %s", f.ClientCAFile)
		}
		cfg.ClientCAs = pool
	}
	verifies := cfg.ClientAuth == tls.VerifyClientCertIfGiven || cfg.ClientAuth == tls.RequireAndVerifyClientCert
	switch {
	case cfg.ClientCAs != nil && cfg.ClientAuth == tls.NoClientCert:
		return nil, errorf(field+".client_auth_type", "with client_ca_file, client_auth_type: RequireAndVerifyClientCert asks every client for a certificate it signed",
			"client_ca_file is given, but no client certificate is asked for")
	case cfg.ClientCAs == nil && verifies:
		return nil, errorf(field+".client_ca_file", "the CA certificates that sign the clients' certificates, in PEM",
			"missing: %s verifies client certificates against it", f.ClientAuthType)
	}
	return cfg, nil
}

func resolve(dir, path string) string {
	if path == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(dir, path)
}

// hashHint is the hint for a password where its hash should be.
const hashHint = `store a bcrypt hash of the password, not the password: htpasswd -nBC 10 "" | tr -d ':\n' makes one`

func (c *Config) parseUsers(n *yaml.Node) error {
	const field = "basic_auth_users"
	if _, err := mapping(n, field, nil); err != nil {
		return err
	}
	c.users = map[string][]byte{}
	cost := bcrypt.MinCost
	for i := 0; i+1 < len(n.Content); i += 2 { // in the file's order: the first mistake is named
		name, v := n.Content[i].Value, n.Content[i+1]
		f := dotted(field, name)
		if name == "" || strings.ContainsAny(name, ":") {
			return errorf(f, "", "line %d: a user name is not empty and has no colon (basic auth cannot send it)", v.Line)
		}
		hash, err := str(v, f)
		if err != nil {
			return err
		}
		n, err := bcrypt.Cost([]byte(hash))
		if err != nil {
			return errorf(f, hashHint, "line %d: not a bcrypt hash ($2a$, $2b$ or $2y$, then the cost)", v.Line)
		}
		cost = max(cost, n)
		c.users[name] = []byte(hash)
	}
	// As slow as the slowest real hash: an unknown user takes no less time
	// than a known one with a wrong password.
	var err error
	if c.dummy, err = bcrypt.GenerateFromPassword([]byte("no user has this password"), cost); err != nil {
		return errorf(field, "", "%v", err)
	}
	return nil
}

// Authenticates says whether the file names users: whether requests must
// say who they are.
func (c *Config) Authenticates() bool { return len(c.users) > 0 }

// Authenticate returns h behind basic auth when the file names users (else
// h): a request without the right user and password gets 401 with
// WWW-Authenticate.
func (c *Config) Authenticate(h http.Handler) http.Handler {
	if len(c.users) == 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.allowed(r) {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="chatq metrics", charset="UTF-8"`)
		http.Error(w, "401 unauthorized", http.StatusUnauthorized)
	})
}

// allowed says whether r has a known user and its password. Every request
// with credentials costs one bcrypt comparison, whether the user is known
// or not, so the time taken does not tell which users exist.
func (c *Config) allowed(r *http.Request) bool {
	user, password, ok := r.BasicAuth()
	if !ok {
		return false
	}
	hash, known := c.users[user]
	if !known {
		hash = c.dummy
	}
	match := bcrypt.CompareHashAndPassword(hash, []byte(password)) == nil
	return match && known
}
