package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/cli/snapshot"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
)

// parse runs `metrics args` with a runF that keeps the options; getenv is
// the environment.
func parse(t *testing.T, env map[string]string, args ...string) (*metricsOptions, error) {
	t.Helper()
	output := "text"
	if len(args) >= 2 && args[0] == "-o" {
		output, args = args[1], args[2:]
	}
	f := &cmdutil.Factory{IO: &iostreams.IOStreams{In: strings.NewReader(""), Out: io.Discard, ErrOut: io.Discard},
		Getenv: func(k string) string { return env[k] }}
	f.Load(&conn.Config{Output: output, Prefix: "app:"}, nil)
	var got *metricsOptions
	cmd := NewCmd(f, func(_ context.Context, o *metricsOptions) error { got = o; return nil })
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cmdutil.UsageErr(err) })
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	return got, cmd.Execute()
}

func TestFlags(t *testing.T) {
	lim := func(q, l, c, scans int) snapshot.Limits {
		return snapshot.Limits{Queues: q, Lists: l, Chats: c, ScanCalls: scans, RegistryCalls: scans, ScanCount: 500}
	}
	def := lim(500, 100, 100, 10)
	for _, tc := range []struct {
		args    []string
		env     map[string]string
		want    metricsOptions // IO, Client, Hint and filter apart
		wantErr string
	}{
		{args: nil, want: metricsOptions{Namespace: "rsmq", Prefix: "app:", Limits: def}},
		{args: []string{"-o", "json", "--openmetrics", "--file", "m.prom"},
			want: metricsOptions{Output: cmdutil.Output{JSON: true}, Namespace: "rsmq", Prefix: "app:", Limits: def, OpenMetrics: true, File: "m.prom"}},
		{args: []string{"--listen", "9464"}, want: metricsOptions{Namespace: "rsmq", Prefix: "app:", Limits: def, Listen: "127.0.0.1:9464"}},
		{args: []string{"--listen", ":9464"}, want: metricsOptions{Namespace: "rsmq", Prefix: "app:", Limits: def, Listen: "127.0.0.1:9464"}},
		{args: []string{"--listen", "0.0.0.0:9464"}, want: metricsOptions{Namespace: "rsmq", Prefix: "app:", Limits: def, Listen: "0.0.0.0:9464"}},
		{args: []string{"--listen", "[::1]:0"}, want: metricsOptions{Namespace: "rsmq", Prefix: "app:", Limits: def, Listen: "[::1]:0"}},
		{args: []string{"--max-queues", "5", "--max-lists", "0", "--max-chats", "0", "--scan-calls", "3", "--include", "a*", "--include", "b", "--exclude", "*-test"},
			want: metricsOptions{Namespace: "rsmq", Prefix: "app:", Limits: lim(5, 0, 0, 3), Include: []string{"a*", "b"}, Exclude: []string{"*-test"}}},
		{args: []string{"--namespace", "app"}, want: metricsOptions{Namespace: "app", Prefix: "app:", Limits: def}},
		{env: map[string]string{"CHATQ_NAMESPACE": "env"}, want: metricsOptions{Namespace: "env", Prefix: "app:", Limits: def}},
		{args: []string{"--max-queues", "0"}, wantErr: "invalid --max-queues 0"},
		{args: []string{"--max-lists", "-1"}, wantErr: "0 or more"},
		{args: []string{"--scan-calls", "0"}, wantErr: "invalid --scan-calls 0"},
		{args: []string{"--include", `a\`}, wantErr: "lone"},
		{args: []string{"--exclude", "[a"}, wantErr: "without its ]"},
		{args: []string{"--listen", "127.0.0.1:70000"}, wantErr: "from 0 to 65535"},
		{args: []string{"--listen", "a:b:c"}, wantErr: "want HOST:PORT or a port"},
		{args: []string{"--listen", "9464", "--openmetrics"}, wantErr: "--openmetrics is for stdout and --file"},
		{args: []string{"--listen", "9464", "--file", "x"}, wantErr: "none of the others"},
		{args: []string{"--namespace", "a b"}, wantErr: "namespace"},
		{args: []string{"--web-config", "web.yml"}, wantErr: "--web-config is for --listen"},
		{args: []string{"--listen", "9464", "--web-config", "testdata/none.yml"}, wantErr: "no such file"},
		{args: []string{"extra"}, wantErr: "unknown command"},
	} {
		got, err := parse(t, tc.env, tc.args...)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%q: error %v, want %q", tc.args, err, tc.wantErr)
			} else if !strings.Contains(err.Error(), "none of the others") && !strings.Contains(err.Error(), "unknown command") && cmdutil.ExitCode(err, false) != cmdutil.ExitUsage {
				t.Errorf("%q: %v exits %d, want 2", tc.args, err, cmdutil.ExitCode(err, false))
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if got.IO == nil || got.Client == nil || got.Hint == nil || got.filter == nil {
			t.Errorf("%q: no streams, client, hint or filter", tc.args)
		}
		got.IO, got.Client, got.Hint, got.filter = nil, nil, nil, nil
		if !reflect.DeepEqual(*got, tc.want) {
			t.Errorf("%q:\n got %+v\nwant %+v", tc.args, *got, tc.want)
		}
	}
}

// options are metrics' options against b, reading queues only.
func options(t *testing.T, b redistest.Backend, ios *iostreams.IOStreams) *metricsOptions {
	o := &metricsOptions{Output: cmdutil.Output{IO: ios}, Client: func() (redis.UniversalClient, error) { return b.Client, nil },
		Hint: func(error) string { return "" }, Namespace: "rsmq", Prefix: b.Prefix,
		Limits: snapshot.Limits{Queues: 10, ScanCalls: 1, RegistryCalls: 1, ScanCount: 500}}
	if err := o.validate(); err != nil {
		t.Fatal(err)
	}
	return o
}

func testIO() (*iostreams.IOStreams, *bytes.Buffer, *bytes.Buffer) {
	out, errOut := &bytes.Buffer{}, &bytes.Buffer{}
	return &iostreams.IOStreams{In: strings.NewReader(""), Out: out, ErrOut: errOut}, out, errOut
}

// The snapshot in text, JSON and a file.
func TestRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		q := delayq.New(b.Client, delayq.Options{Prefix: b.Prefix})
		if err := q.Create(ctx, "jobs", delayq.Attributes{}); err != nil {
			t.Fatal(err)
		}
		if _, err := q.Push(ctx, "jobs", "m", delayq.PushOptions{}); err != nil {
			t.Fatal(err)
		}

		ios, out, errOut := testIO()
		if err := metricsRun(ctx, options(t, b, ios)); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "\nchatq_queue_messages{kind=\"rsmq\",queue=\"jobs\",state=\"ready\"} 1\n") || errOut.Len() != 0 {
			t.Errorf("text:\n%s\nstderr: %s", out, errOut)
		}

		ios, out, _ = testIO()
		o := options(t, b, ios)
		o.JSON = true
		if err := metricsRun(ctx, o); err != nil {
			t.Fatal(err)
		}
		var fams []familyJSON
		if err := json.Unmarshal(out.Bytes(), &fams); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		found := false
		for _, f := range fams {
			for _, s := range f.Samples {
				if f.Name == "chatq_queue_messages" && s.Labels["queue"] == "jobs" && s.Labels["state"] == "ready" && s.Value == "1" {
					found = true
				}
			}
		}
		if !found || fams[0].Name != "chatq_up" || fams[0].Type != "gauge" {
			t.Errorf("JSON: %s", out)
		}

		// --file: written whole, readable by all, no temporary file left.
		dir := t.TempDir()
		ios, out, _ = testIO()
		o = options(t, b, ios)
		o.File = filepath.Join(dir, "chatq.prom")
		if err := metricsRun(ctx, o); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(o.File)
		if err != nil || !strings.Contains(string(data), "\nchatq_up 1\n") || out.Len() != 0 {
			t.Errorf("file: %v\n%s\nstdout %q", err, data, out)
		}
		if fi, err := os.Stat(o.File); err != nil || fi.Mode().Perm() != 0o644 {
			t.Errorf("file mode: %v %v", fi, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("left in the directory: %v", entries)
		}
	})
}

// --listen serves until the context ends, prints where, and exits 0; a
// port in use is an error with a hint.
func TestServe(t *testing.T) {
	b := redistest.Embedded(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ios, _, _ := testIO()
	o := options(t, b, ios)
	o.Listen = addr
	err = metricsRun(t.Context(), o)
	if err == nil || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("a port in use: %v", err)
	}
	var h interface{ Hint() string }
	if !errors.As(err, &h) || !strings.Contains(h.Hint(), "pick another port") {
		t.Errorf("a port in use: no hint (%v)", err)
	}
	ln.Close()

	pr, pw := io.Pipe()
	ios, _, errOut := testIO()
	ios.Out = pw
	o = options(t, b, ios)
	o.Listen = addr
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- metricsRun(ctx, o) }()
	line := make([]byte, 100)
	n, _ := pr.Read(line)
	if got := strings.TrimSpace(string(line[:n])); got != "http://"+addr+"/metrics" {
		t.Fatalf("printed %q", got)
	}
	go io.Copy(io.Discard, pr)
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), "\nchatq_up 1\n") || strings.Contains(string(body), b.URL) {
		t.Errorf("served:\n%s", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("after the context ended: %v", err)
	}
	if !strings.Contains(errOut.String(), "serving metrics on http://"+addr+"/metrics") || !strings.Contains(errOut.String(), "stopped") {
		t.Errorf("stderr: %s", errOut)
	}
}

// A listener on every interface prints an address a person can open
// (Go reports it as [::]); others print as they are.
func TestOpenable(t *testing.T) {
	for _, tc := range []struct {
		asked string
		addr  *net.TCPAddr
		want  string
	}{
		{"0.0.0.0:9464", &net.TCPAddr{IP: net.IPv6unspecified, Port: 9464}, "0.0.0.0:9464"},
		{":9464", &net.TCPAddr{IP: net.IPv4zero, Port: 9464}, "0.0.0.0:9464"},
		{"[::]:9464", &net.TCPAddr{IP: net.IPv6unspecified, Port: 9464}, "[::]:9464"},
		{"127.0.0.1:0", &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 41234}, "127.0.0.1:41234"},
	} {
		if got := openable(tc.asked, tc.addr); got != tc.want {
			t.Errorf("openable(%q, %v) = %q, want %q", tc.asked, tc.addr, got, tc.want)
		}
	}
}
