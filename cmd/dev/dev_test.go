package dev

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/cmdtest"
	"github.com/redis/go-redis/v9"
)

func TestDevFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		json bool
		want *devOptions // nil: a usage error
	}{
		{args: []string{"dev"}, want: &devOptions{Addr: "127.0.0.1:6379"}},
		{args: []string{"dev", "--addr", "127.0.0.1:0"}, json: true, want: &devOptions{Output: cmdutil.Output{JSON: true}, Addr: "127.0.0.1:0"}},
		{args: []string{"dev", "extra"}},
		{args: []string{"dev", "--port", "1"}},
	} {
		out := "text"
		if tc.json {
			out = "json"
		}
		o, err := cmdtest.Parse(t, cmdtest.Root(), cmdtest.Factory(&conn.Config{Output: out}, nil), NewCmdDev, tc.args...)
		if tc.want == nil {
			if !cmdtest.IsUsage(err) {
				t.Errorf("%q: %v, want a usage error", tc.args, err)
			}
			continue
		}
		if err != nil || o.IO == nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		o.IO = nil
		if !reflect.DeepEqual(o, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.args, o, tc.want)
		}
	}
}

// dev prints the URL of a server that answers, the same on a terminal and
// piped, and stops cleanly when its context ends (Ctrl-C).
func TestDevRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		tty  bool
		json bool
	}{{"terminal", true, false}, {"piped", false, false}, {"terminal json", true, true}, {"piped json", false, true}} {
		ios, _, errOut := iostreams.Test(tc.tty, "")
		// stdout is a pipe: the test reads the URL as dev prints it.
		pr, pw := io.Pipe()
		ios.Out = pw
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			done <- devRun(ctx, &devOptions{Output: cmdutil.Output{IO: ios, JSON: tc.json}, Addr: "127.0.0.1:0"})
		}()

		var url string
		if tc.json {
			var v struct {
				URL string `json:"url"`
			}
			if err := json.NewDecoder(pr).Decode(&v); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			url = v.URL
		} else {
			line, err := bufio.NewReader(pr).ReadString('\n')
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			url = strings.TrimSuffix(line, "\n")
		}
		opt, err := redis.ParseURL(url)
		if err != nil {
			t.Fatalf("%s: printed %q: %v", tc.name, url, err)
		}
		c := redis.NewClient(opt)
		if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
			t.Errorf("%s: the server at %s: %v", tc.name, url, err)
		}
		c.Close()

		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s: stopped with %v, want nil (exit 0)", tc.name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: dev did not stop when its context ended", tc.name)
		}
		want := []string{
			"chatq: embedded server (miniredis) listening on " + opt.Addr + "; it keeps nothing: data is lost when it stops",
			"chatq: use it with: export CHATQ_URL=" + url + "   (Ctrl-C stops it)",
			"chatq: stopped",
		}
		if got := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: stderr\n%q\nwant\n%q", tc.name, got, want)
		}
	}
}

// An address in use fails at once, with a hint, and prints nothing.
func TestDevAddrInUse(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ios, out, _ := iostreams.Test(false, "")
	err = devRun(context.Background(), &devOptions{Output: cmdutil.Output{IO: ios}, Addr: l.Addr().String()})
	var h *cmdutil.HintError
	if err == nil || !strings.HasPrefix(err.Error(), "listen on "+l.Addr().String()+": ") || !errors.As(err, &h) || !strings.Contains(h.Hint(), "--addr") || out.Len() != 0 {
		t.Errorf("address in use: %v, printed %q", err, out)
	}
}
