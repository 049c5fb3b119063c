package cmd

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
)

// entry returns the setting key of entries.
func entry(t *testing.T, entries []conn.ConfigEntry, key string) conn.ConfigEntry {
	t.Helper()
	for _, e := range entries {
		if e.Key == key {
			return e
		}
	}
	t.Fatalf("no setting %s in %+v", key, entries)
	return conn.ConfigEntry{}
}

func TestConfigFlags(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("ulr: redis://x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		env    map[string]string
		json   bool
		prefix string // the prefix setting's value and source
		source string
		err    bool // the options carry the configuration's problem
		usage  bool // a usage error from the flags
	}{
		{args: []string{"config"}, prefix: "", source: "default"},
		{args: []string{"--prefix", "app:", "config", "-o", "json"}, json: true, prefix: "app:", source: "flag"},
		{args: []string{"config"}, env: map[string]string{"CHATQ_PREFIX": "env:"}, prefix: "env:", source: "env CHATQ_PREFIX"},
		// A bad config file: config still runs, with the problem.
		{args: []string{"--config", bad, "config"}, prefix: "", source: "default", err: true},
		{args: []string{"config", "extra"}, usage: true},
	} {
		o, err := parse(t, newCmdConfig, tc.env, tc.args...)
		if tc.usage {
			if !isUsage(err) {
				t.Errorf("%q: %v, want a usage error", tc.args, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		p := entry(t, o.Entries, "prefix")
		if o.JSON != tc.json || p.Value != tc.prefix || p.Source != tc.source || (o.Err != nil) != tc.err {
			t.Errorf("%q: JSON %v, prefix %+v, err %v", tc.args, o.JSON, p, o.Err)
		}
	}
}

func TestConfigRun(t *testing.T) {
	entries := []conn.ConfigEntry{
		{Key: "url", Value: "redis://127.0.0.1:6379/0", Source: "default"},
		{Key: "prefix", Value: "app:", Source: "flag"},
		{Key: "timeout", Value: "soon", Source: "env CHATQ_TIMEOUT", Error: "not a duration"},
	}
	problem := errors.New("CHATQ_TIMEOUT: not a duration")
	for _, tc := range []struct {
		err             error
		terminal, piped string
	}{
		{nil,
			"KEY      VALUE                     SOURCE\nurl      redis://127.0.0.1:6379/0  default\nprefix   app:                      flag\ntimeout  soon                      env CHATQ_TIMEOUT\n",
			"url\tredis://127.0.0.1:6379/0\tdefault\nprefix\tapp:\tflag\ntimeout\tsoon\tenv CHATQ_TIMEOUT\n"},
		// With a problem, an ERROR column, and the problem returned (exit 2).
		{problem,
			"KEY      VALUE                     SOURCE             ERROR\nurl      redis://127.0.0.1:6379/0  default            \nprefix   app:                      flag               \ntimeout  soon                      env CHATQ_TIMEOUT  not a duration\n",
			"url\tredis://127.0.0.1:6379/0\tdefault\t\nprefix\tapp:\tflag\t\ntimeout\tsoon\tenv CHATQ_TIMEOUT\tnot a duration\n"},
	} {
		for _, m := range modes {
			io, out, _ := iostreams.Test(m.tty, "")
			if err := configRun(&configOptions{Output: cmdutil.Output{IO: io}, Entries: entries, Err: tc.err}); err != tc.err {
				t.Errorf("%s: returned %v, want %v", m.name, err, tc.err)
			}
			want := tc.piped
			if m.tty {
				want = tc.terminal
			}
			if out.String() != want {
				t.Errorf("%s, err %v: printed\n%q\nwant\n%q", m.name, tc.err, out, want)
			}

			io, out, _ = iostreams.Test(m.tty, "")
			if err := configRun(&configOptions{Output: cmdutil.Output{IO: io, JSON: true}, Entries: entries, Err: tc.err}); err != tc.err {
				t.Errorf("%s: returned %v, want %v", m.name, err, tc.err)
			}
			var got []conn.ConfigEntry
			if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got) != 3 || got[2] != entries[2] || got[0].Error != "" {
				t.Errorf("%s: JSON %q: %+v, %v", m.name, out, got, err)
			}
		}
	}
}
