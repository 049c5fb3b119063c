package conn

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/clierr"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/pflag"
)

func TestNormalizeURL(t *testing.T) {
	for _, tt := range []struct{ in, user, pass string }{
		{"redis://u:S3cr3t#x@h:6379/0", "u", "S3cr3t#x"},
		{"redis://u:a/b@h:6379/0", "u", "a/b"},
		{"redis://u:a?b@h:6379/0", "u", "a?b"},
		{"redis://u:p@ss@h:6379/0", "u", "p@ss"},
		{"redis://u:50%off#@h:6379/0", "u", "50%off#"},
		{"redis://u:a%23b@h:6379/0", "u", "a#b"},
		{"redis://:only#pw@h", "", "only#pw"},
		{"redis://h:6379/0", "", ""},
	} {
		u, p, ok := urlCredentials(tt.in)
		if !ok || u != tt.user || p != tt.pass {
			t.Errorf("%s: user %q password %q ok %v, want %q %q", tt.in, u, p, ok, tt.user, tt.pass)
		}
		opt, err := redis.ParseURL(normalizeURL(tt.in))
		if err != nil || opt.Addr != "h:6379" || opt.Password != tt.pass {
			t.Errorf("%s: go-redis reads %+v, %v", tt.in, opt, err)
		}
	}
}

func TestCredentials(t *testing.T) {
	c := &Config{Password: "env"}
	if u, p := c.credentials("", ""); u != "" || p != "env" {
		t.Errorf("env only: %q %q", u, p)
	}
	if _, p := c.credentials("", "url"); p != "url" {
		t.Errorf("the URL's password wins over env: %q", p)
	}
	c.User = "flag"
	if u, _ := c.credentials("urluser", "url"); u != "flag" {
		t.Errorf("--user wins over the URL's: %q", u)
	}
	c.SetAskedPassword("asked")
	if _, p := c.credentials("", "url"); p != "asked" {
		t.Errorf("--askpass wins: %q", p)
	}
}

// Every kind of client takes the same TLS settings, credentials and
// timeouts; Sentinel's own credentials are apart from the master's.
func TestNewClientModes(t *testing.T) {
	io := &iostreams.IOStreams{ErrOut: &bytes.Buffer{}}
	base := Config{TLS: true, SNI: "redis.internal", Timeout: time.Second, User: "app", Password: "pw", CACert: "", Insecure: true}

	cl := base
	cl.URL, cl.Cluster = "redis://a:7000?addr=b:7001", true
	c, err := NewClient(&cl, io, 0)
	if err != nil {
		t.Fatal(err)
	}
	co := c.(*redis.ClusterClient).Options()
	if co.TLSConfig == nil || co.TLSConfig.ServerName != "redis.internal" || co.Dialer == nil || co.Username != "app" || co.Password != "pw" {
		t.Errorf("cluster: tls %v user %q", co.TLSConfig, co.Username)
	}
	if !strings.Contains(io.ErrOut.(*bytes.Buffer).String(), "warning: --insecure") {
		t.Error("no --insecure warning")
	}

	se := base
	se.URL, se.SentinelMaster = "redis://u:urlpw@s1:26379?addr=s2:26379", "main"
	se.SentinelUser, se.SentinelPassword = "sentinel", "spw"
	se.DB, se.DBSet = 3, true
	c, err = NewClient(&se, io, 0)
	if err != nil {
		t.Fatal(err)
	}
	so := c.(*redis.Client).Options()
	if so.TLSConfig == nil || so.Username != "app" || so.Password != "urlpw" || so.DB != 3 {
		t.Errorf("sentinel master: tls %v user %q password %q db %d", so.TLSConfig, so.Username, so.Password, so.DB)
	}

	cl.DB, cl.DBSet = 1, true
	if _, err := NewClient(&cl, io, 0); err == nil {
		t.Error("--db 1 with --cluster: no error")
	}
}

func TestValidateConnection(t *testing.T) {
	for _, c := range []Config{
		{URL: "redis://h", CACert: "ca.pem"},
		{URL: "redis://h", Insecure: true},
		{URL: "rediss://h", Cert: "c.pem"},
		{URL: "redis://h", Cluster: true, SentinelMaster: "m"},
		{URL: "unix:///s", TLS: true},
	} {
		if err := c.validateConnection(); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	for _, c := range []Config{
		{URL: "rediss://h", CACert: "ca.pem", Cert: "c", Key: "k", SNI: "x"},
		{URL: "redis://h", TLS: true, Insecure: true},
	} {
		if err := c.validateConnection(); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
}

// The queue namespace: --namespace, else CHATQ_NAMESPACE, else rsmq; one
// that a key or hash tag could not hold is a usage error.
func TestNamespace(t *testing.T) {
	for _, tt := range []struct {
		flag, env, want, wantErr string
	}{
		{want: "rsmq"},
		{env: "fromenv", want: "fromenv"},
		{flag: "myapp", env: "fromenv", want: "myapp"},
		{flag: "my app", wantErr: `invalid --namespace "my app": no whitespace, '{' or '}'`},
		{env: "a{b}", wantErr: `invalid --namespace "a{b}"`},
	} {
		got, err := Namespace(tt.flag, func(k string) string {
			if k == "CHATQ_NAMESPACE" {
				return tt.env
			}
			return ""
		})
		switch {
		case tt.wantErr == "" && (err != nil || got != tt.want):
			t.Errorf("%q, env %q: %q, %v; want %q", tt.flag, tt.env, got, err, tt.want)
		case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr) || !clierr.IsUsage(err)):
			t.Errorf("%q, env %q: %v; want the usage error %q", tt.flag, tt.env, err, tt.wantErr)
		}
	}
}

// A config file that holds a password and that other users can read is
// warned about, once, naming the file, the keys that hold one and the fix;
// config shows the warning beside those keys.
func TestConfigFilePasswordWarning(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, body string
		mode       os.FileMode
		keys       []string
	}{
		{"open", "url: redis://app:pw@h:1/0\npassword: x\nsentinel-password: y\n", 0o644, []string{"password", "sentinel-password", "url"}},
		{"group", "password: x\n", 0o640, []string{"password"}},
		{"url only", "url: redis://:pw@h:1/0\n", 0o604, []string{"url"}},
		{"private", "password: x\n", 0o600, nil},
		{"no password", "url: redis://app@h:1/0\nprefix: p\n", 0o644, nil},
		{"empty password", "password: ''\n", 0o644, nil},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".yaml")
		if err := os.WriteFile(path, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, tc.mode); err != nil {
			t.Fatal(err)
		}
		flags := pflag.NewFlagSet("t", pflag.ContinueOnError)
		flags.String("url", "", "")
		cfg, err := LoadConfig(flags, func(k string) string {
			if k == "CHATQ_CONFIG" {
				return path
			}
			return ""
		})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tc.keys == nil {
			if len(cfg.Warnings) != 0 {
				t.Errorf("%s: warnings %v, want none", tc.name, cfg.Warnings)
			}
			continue
		}
		if len(cfg.Warnings) != 1 || !slices.Equal(cfg.Warnings[0].Keys, tc.keys) {
			t.Fatalf("%s: warnings %+v, want one about %v", tc.name, cfg.Warnings, tc.keys)
		}
		msg := cfg.Warnings[0].Message
		for _, want := range []string{path, "chmod 600 " + path, fmt.Sprintf("mode %04o", tc.mode)} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: %q does not say %q", tc.name, msg, want)
			}
		}
		for _, e := range cfg.Describe(flags, func(string) string { return "" }) {
			if (e.Warning != "") != slices.Contains(tc.keys, e.Key) {
				t.Errorf("%s: config's %s has warning %q", tc.name, e.Key, e.Warning)
			}
		}
	}
}
