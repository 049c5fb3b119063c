package webconfig

import (
	"crypto/tls"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/webconfig/testcerts"
	"golang.org/x/crypto/bcrypt"
)

// A good file: TLS with a client CA, users; paths from the file's
// directory; an empty file is plain HTTP without users.
func TestLoad(t *testing.T) {
	certs := testcerts.New(t)
	h4, _ := bcrypt.GenerateFromPassword([]byte("a"), bcrypt.MinCost)
	h6, _ := bcrypt.GenerateFromPassword([]byte("b"), bcrypt.MinCost+2)
	path := filepath.Join(certs.Dir, "web.yml")
	yml := "tls_server_config:\n  cert_file: server.crt\n  key_file: " + certs.ServerKey + "\n" +
		"  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: ca.crt\n  min_version: TLS13\n" +
		"basic_auth_users:\n  joe: '" + string(h4) + "'\n  jeff: '" + string(h6) + "'\n"
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.TLS == nil || c.TLS.MinVersion != tls.VersionTLS13 || c.TLS.ClientAuth != tls.VerifyClientCertIfGiven || c.TLS.ClientCAs == nil {
		t.Errorf("TLS: %+v", c.TLS)
	}
	if cert, err := c.TLS.GetCertificate(nil); err != nil || cert == nil {
		t.Errorf("the certificate: %v", err)
	}
	if !c.Authenticates() || len(c.users) != 2 {
		t.Errorf("users: %v", c.users)
	}
	// The dummy hash for unknown users costs as much as the dearest real one.
	if cost, err := bcrypt.Cost(c.dummy); err != nil || cost != bcrypt.MinCost+2 {
		t.Errorf("the dummy hash's cost: %d %v, want %d", cost, err, bcrypt.MinCost+2)
	}
	for _, empty := range []string{"", "# nothing\n", "{}\n", "tls_server_config:\nbasic_auth_users:\n"} {
		c, err := Parse([]byte(empty), certs.Dir)
		if empty == "tls_server_config:\nbasic_auth_users:\n" {
			// An empty tls_server_config still asks for TLS: without a
			// certificate, it is a mistake.
			if err == nil {
				t.Errorf("%q: no error", empty)
			}
			continue
		}
		if err != nil || c.TLS != nil || c.Authenticates() {
			t.Errorf("%q: %+v %v", empty, c, err)
		}
	}
}

// Each mistake is an *Error naming its field, with a hint where one helps.
func TestParseErrors(t *testing.T) {
	certs := testcerts.New(t)
	tlsOK := "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
	for _, c := range []struct{ yml, field, problem, hint string }{
		{"tls_server_config: [\n", "", "not YAML", ""},
		{"- a\n", "", "must be a mapping", ""},
		{"tls_config:\n  cert_file: x\n", "tls_config", "unknown key", "chatq reads tls_server_config, basic_auth_users there"},
		{"http_server_config:\n  http2: false\n", "http_server_config", "unknown key", "chatq reads"},
		{tlsOK + "  max_version: TLS13\n", "tls_server_config.max_version", "line 4: unknown key", "cert_file, key_file, client_auth_type, client_ca_file, min_version"},
		{tlsOK + "  cert_file: again\n", "tls_server_config.cert_file", "given twice", ""},
		{"tls_server_config:\n  cert_file: server.crt\n", "tls_server_config.key_file", "missing (cert_file is given)", "the two go together"},
		{"tls_server_config:\n  key_file: server.key\n", "tls_server_config.cert_file", "missing (key_file is given)", "the two go together"},
		{"tls_server_config:\n  cert_file: server.crt\n  key_file: client.key\n", "tls_server_config.cert_file", "private key does not match", "its private key"},
		{"tls_server_config:\n  cert_file: none.crt\n  key_file: server.key\n", "tls_server_config.cert_file", "no such file", ""},
		{"tls_server_config:\n  cert_file: [a]\n  key_file: server.key\n", "tls_server_config.cert_file", "want a string", ""},
		{tlsOK + "  min_version: TLS1.2\n", "tls_server_config.min_version", `unknown version "TLS1.2"`, "TLS10, TLS11, TLS12, TLS13"},
		{tlsOK + "  client_auth_type: Require\n", "tls_server_config.client_auth_type", `unknown type "Require"`, "RequireAndVerifyClientCert"},
		{tlsOK + "  client_ca_file: ca.crt\n", "tls_server_config.client_auth_type", "no client certificate is asked for", "RequireAndVerifyClientCert"},
		{tlsOK + "  client_auth_type: RequireAndVerifyClientCert\n", "tls_server_config.client_ca_file", "missing", "sign the clients' certificates"},
		{tlsOK + "  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: server.key\n", "tls_server_config.client_ca_file", "no PEM certificate", "sign the clients' certificates"},
		{"basic_auth_users:\n  prometheus: s3cret\n", "basic_auth_users.prometheus", "not a bcrypt hash", "htpasswd -nBC 10"},
		{"basic_auth_users:\n  prometheus:\n", "basic_auth_users.prometheus", "want a string", ""},
		{"basic_auth_users:\n  'a:b': '$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi'\n", "basic_auth_users.a:b", "no colon", ""},
		{"basic_auth_users: joe\n", "basic_auth_users", "must be a mapping", ""},
	} {
		_, err := Parse([]byte(c.yml), certs.Dir)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("%q: %v, want an *Error", c.yml, err)
			continue
		}
		if e.Field != c.field || !strings.Contains(e.Problem, c.problem) || !strings.Contains(e.Hint, c.hint) || (c.hint == "" && e.Hint != "") {
			t.Errorf("%q:\n got field %q, problem %q, hint %q\nwant field %q, problem ~%q, hint ~%q", c.yml, e.Field, e.Problem, e.Hint, c.field, c.problem, c.hint)
		}
	}
	if _, err := Load(filepath.Join(certs.Dir, "none.yml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing file: %v", err)
	}
}

// Authenticate: 401 with WWW-Authenticate unless the user and password are
// right; the handler is not called then.
func TestAuthenticate(t *testing.T) {
	h, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	c, err := Parse([]byte("basic_auth_users:\n  joe: '"+string(h)+"'\n"), ".")
	if err != nil {
		t.Fatal(err)
	}
	served := 0
	handler := c.Authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ }))
	for _, tc := range []struct {
		user, password string
		set            bool
		want           int
	}{{"joe", "pw", true, 200}, {"joe", "PW", true, 401}, {"jeff", "pw", true, 401}, {"", "", true, 401}, {"", "", false, 401}} {
		req := httptest.NewRequest("GET", "/metrics", nil)
		if tc.set {
			req.SetBasicAuth(tc.user, tc.password)
		}
		w := httptest.NewRecorder()
		before := served
		handler.ServeHTTP(w, req)
		if w.Code != tc.want || (tc.want == 401) != (served == before) {
			t.Errorf("%+v: %d, served %v", tc, w.Code, served != before)
		}
		if tc.want == 401 && !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic realm=") {
			t.Errorf("%+v: WWW-Authenticate %q", tc, w.Header().Get("WWW-Authenticate"))
		}
	}
	// No users: the handler as it is.
	plain := &Config{}
	if plain.Authenticates() {
		t.Error("a config without users authenticates")
	}
}
