package chat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

func TestWatchFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want *watchOptions // nil: a usage error
	}{
		{[]string{"jeff"}, &watchOptions{User: "jeff", Poll: 5 * time.Second}},
		{[]string{"jeff", "--mark", "--poll", "100ms", "--give-up-after", "1m"}, &watchOptions{User: "jeff", Mark: true, Poll: 100 * time.Millisecond, GiveUpAfter: time.Minute}},
		{[]string{"jeff", "--poll", "99ms"}, nil},
		{[]string{"jeff", "--poll", "soon"}, nil},
		{[]string{"je}ff"}, nil},
		{[]string{}, nil},
	} {
		got, err := parse(t, NewCmdWatch, append([]string{"watch"}, tc.args...)...)
		if tc.want == nil {
			if !isUsage(err) {
				t.Errorf("%q: got %+v, %v; want a usage error", tc.args, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tc.args, err)
			continue
		}
		if got.Persistent == nil {
			t.Errorf("%q: no reconnecting loop", tc.args)
		}
		got.Client, got.IO, got.Persistent = nil, nil, nil
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: got %+v, want %+v", tc.args, got, tc.want)
		}
	}
}

// lockedBuffer is a buffer a running watch writes while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func TestWatchRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		client, chats := clientOn(b)
		for _, m := range modes {
			for _, asJSON := range []bool{false, true} {
				name := m.name
				if asJSON {
					name += "-json"
				}
				t.Run(name, func(t *testing.T) {
					u := "jeff-" + name
					id := mustCreate(t, chats, "", "joe", []string{u}, "before")
					var out, errOut lockedBuffer
					ios := &iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, OutTTY: m.tty, ErrTTY: m.tty}
					o := &watchOptions{Output: cmdutil.Output{IO: ios, JSON: asJSON}, Client: client, User: u, Poll: 100 * time.Millisecond,
						Persistent: func(d time.Duration) *conn.Persistent { return &conn.Persistent{IO: ios, GiveUpAfter: d} }}
					ctx, cancel := context.WithCancel(context.Background())
					defer cancel()
					done := make(chan error, 1)
					go func() { done <- watchRun(ctx, o) }()

					// The unseen message, then one sent while it watches.
					if _, err := chats.Send(context.Background(), id, "joe", "after\tthat"); err != nil {
						t.Fatal(err)
					}
					deadline := time.Now().Add(20 * time.Second)
					for strings.Count(out.String(), "\n") < 2 && time.Now().Before(deadline) {
						time.Sleep(10 * time.Millisecond)
					}
					cancel()
					if err := <-done; err != nil {
						t.Fatalf("watch: %v", err)
					}
					if asJSON {
						var got []messageLine
						sc := bufio.NewScanner(strings.NewReader(out.String()))
						for sc.Scan() {
							var l messageLine
							if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
								t.Fatalf("line %q: %v", sc.Text(), err)
							}
							got = append(got, l)
						}
						if len(got) != 2 || got[0].ChatID != id || got[0].Message.Message != "before" || got[1].Message.Message != "after\tthat" || got[1].ID != 2 {
							t.Errorf("JSON lines %q", out.String())
						}
					} else {
						// The same on a terminal: tabs escaped either way.
						want := id + "\t1\tjoe\tbefore\n" + id + "\t2\tjoe\tafter\\tthat\n"
						if out.String() != want {
							t.Errorf("printed %q, want %q", out.String(), want)
						}
					}
					wantErr := ""
					if m.tty {
						wantErr = "chatq: watching " + u + "'s chats; Ctrl-C to stop\n"
					}
					if errOut.String() != wantErr {
						t.Errorf("stderr %q, want %q", errOut.String(), wantErr)
					}
				})
			}
		}
	})
}
