package exporter

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/webconfig"
	"github.com/chatq-dev/chatq/internal/cli/webconfig/testcerts"
	"golang.org/x/crypto/bcrypt"
)

// serveWeb serves an embedded server's metrics with the web configuration
// yml (in the directory of certs) until the test ends, and returns the
// listener's address.
func serveWeb(t *testing.T, certs *testcerts.Set, yml string) string {
	t.Helper()
	path := filepath.Join(certs.Dir, "web.yml")
	if err := os.WriteFile(path, []byte(yml), 0o600); err != nil {
		t.Fatal(err)
	}
	web, err := webconfig.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	e := embedded(t)
	e.opt.Web = web
	return strings.TrimPrefix(serve(t, e), "http://")
}

// get GETs url with client, and returns the status and body, or the error.
func get(client *http.Client, url string, auth ...string) (int, string, http.Header, error) {
	req, _ := http.NewRequest("GET", url, nil)
	if len(auth) == 2 {
		req.SetBasicAuth(auth[0], auth[1])
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body), resp.Header, err
}

func tlsClient(cfg *tls.Config) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
}

// TLS with the certificate and key of tls_server_config: a client that
// trusts the CA scrapes; one that does not, or that speaks plain HTTP, or
// below min_version, does not.
func TestServeTLS(t *testing.T) {
	certs := testcerts.New(t)
	addr := serveWeb(t, certs, "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  min_version: TLS13\n")
	status, body, _, err := get(tlsClient(&tls.Config{RootCAs: certs.Pool}), "https://"+addr+"/metrics")
	if err != nil || status != 200 || !strings.Contains(body, "\nchatq_up 1\n") {
		t.Fatalf("over TLS: %d %v\n%s", status, err, body)
	}
	if _, _, _, err := get(tlsClient(&tls.Config{}), "https://"+addr+"/metrics"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a client that does not trust the CA: %v, want a certificate error", err)
	}
	if _, _, _, err := get(tlsClient(&tls.Config{RootCAs: certs.Pool, MaxVersion: tls.VersionTLS12}), "https://"+addr+"/metrics"); err == nil {
		t.Error("a TLS 1.2 client was served, below min_version TLS13")
	}
	// Go's TLS server answers plain HTTP with a 400 that says so.
	status, body, _, err = get(http.DefaultClient, "http://"+addr+"/metrics")
	if err != nil || status != 400 || strings.Contains(body, "chatq_up") {
		t.Errorf("plain HTTP to the TLS port: %d %v\n%s", status, err, body)
	}
}

// client_auth_type RequireAndVerifyClientCert: a client without a
// certificate signed by client_ca_file is refused at the handshake.
func TestServeClientCert(t *testing.T) {
	certs := testcerts.New(t)
	other := testcerts.New(t) // another CA, and a client certificate it signed
	addr := serveWeb(t, certs, "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"+
		"  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.crt\n")
	url := "https://" + addr + "/metrics"
	status, body, _, err := get(tlsClient(&tls.Config{RootCAs: certs.Pool, Certificates: []tls.Certificate{certs.Client}}), url)
	if err != nil || status != 200 || !strings.Contains(body, "\nchatq_up 1\n") {
		t.Fatalf("with a client certificate: %d %v\n%s", status, err, body)
	}
	for name, certificates := range map[string][]tls.Certificate{"no client certificate": nil, "one of another CA": {other.Client}} {
		if status, _, _, err := get(tlsClient(&tls.Config{RootCAs: certs.Pool, Certificates: certificates}), url); err == nil {
			t.Errorf("%s: served, %d", name, status)
		}
	}
}

// basic_auth_users: the right user and password are served; a wrong
// password, an unknown user and no credentials get 401 with
// WWW-Authenticate, on every path.
func TestServeBasicAuth(t *testing.T) {
	certs := testcerts.New(t)
	hash := func(pw string) string {
		h, err := bcrypt.GenerateFromPassword([]byte(pw), bcrypt.MinCost)
		if err != nil {
			t.Fatal(err)
		}
		return string(h)
	}
	addr := serveWeb(t, certs, fmt.Sprintf("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"+
		"basic_auth_users:\n  prometheus: %q\n  other: %q\n", hash("s3cret"), hash("other-pw")))
	client := tlsClient(&tls.Config{RootCAs: certs.Pool})
	url := "https://" + addr
	status, body, _, err := get(client, url+"/metrics", "prometheus", "s3cret")
	if err != nil || status != 200 || !strings.Contains(body, "\nchatq_up 1\n") {
		t.Fatalf("the right password: %d %v\n%s", status, err, body)
	}
	for _, c := range []struct {
		path string
		auth []string
	}{
		{"/metrics", []string{"prometheus", "wrong"}},
		{"/metrics", []string{"prometheus", "other-pw"}}, // another user's
		{"/metrics", []string{"nobody", "s3cret"}},
		{"/metrics", nil},
		{"/", nil},
		{"/none", nil},
	} {
		status, body, h, err := get(client, url+c.path, c.auth...)
		if err != nil || status != 401 || !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic ") || strings.Contains(body, "chatq_up") {
			t.Errorf("%s %q: %d %v, WWW-Authenticate %q\n%s", c.path, c.auth, status, err, h.Get("WWW-Authenticate"), body)
		}
	}
}

// Basic auth without TLS (behind a proxy that terminates it, say) is
// served on plain HTTP.
func TestServeBasicAuthPlain(t *testing.T) {
	h, _ := bcrypt.GenerateFromPassword([]byte("pw"), bcrypt.MinCost)
	addr := serveWeb(t, testcerts.New(t), fmt.Sprintf("basic_auth_users:\n  prometheus: '%s'\n", h))
	if status, _, _, err := get(http.DefaultClient, "http://"+addr+"/metrics", "prometheus", "pw"); err != nil || status != 200 {
		t.Errorf("the right password: %d %v", status, err)
	}
	if status, _, _, err := get(http.DefaultClient, "http://"+addr+"/metrics"); err != nil || status != 401 {
		t.Errorf("no password: %d %v", status, err)
	}
}
