package queue

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/delayq"
)

// The handler's CHATQ_URL never carries the password; the rest stays.
func TestWithoutPassword(t *testing.T) {
	for in, want := range map[string]string{
		"redis://127.0.0.1:6379/0":                       "redis://127.0.0.1:6379/0",
		"redis://:s3cret@127.0.0.1:6379/0":               "redis://127.0.0.1:6379/0",
		"rediss://alice:s3cret@redis.example.com:6380/2": "rediss://alice@redis.example.com:6380/2",
		"redis://bob@h:1?addr=h2:2&addr=h3:3":            "redis://bob@h:1?addr=h2:2&addr=h3:3",
		"redis://bob:pw@h:1?addr=h2:2&addr=h3:3":         "redis://bob@h:1?addr=h2:2&addr=h3:3",
		"unix://:pw@/var/run/redis.sock?db=1":            "unix:///var/run/redis.sock?db=1",
	} {
		if got := withoutPassword(in); got != want {
			t.Errorf("withoutPassword(%q) = %q, want %q", in, got, want)
		}
	}
}

// A handler gets the TLS, Sentinel and credential settings chatq runs with,
// as absolute file names, and never a password.
func TestHandlerConnEnv(t *testing.T) {
	env := strings.Join(handlerConnEnv(&conn.Config{
		URL: "rediss://app:s3cret@redis.internal:6380/0", Prefix: "p:", TLS: true,
		CACert: "ca.pem", Cert: "/etc/chatq/client.pem", Key: "client.key", SNI: "redis.internal",
		SentinelMaster: "main", User: "app", DB: 2, DBSet: true, Password: "hunter2",
	}, "myapp"), "\n")
	wd, _ := os.Getwd()
	for _, want := range []string{
		"CHATQ_URL=rediss://app@redis.internal:6380/0", "CHATQ_PREFIX=p:", "CHATQ_NAMESPACE=myapp", "CHATQ_TLS=true",
		"CHATQ_CACERT=" + filepath.Join(wd, "ca.pem"), "CHATQ_CERT=/etc/chatq/client.pem",
		"CHATQ_KEY=" + filepath.Join(wd, "client.key"), "CHATQ_SNI=redis.internal",
		"CHATQ_SENTINEL_MASTER=main", "CHATQ_USER=app", "CHATQ_DB=2",
	} {
		if !strings.Contains(env, want+"\n") && !strings.HasSuffix(env, want) {
			t.Errorf("missing %s in:\n%s", want, env)
		}
	}
	if strings.Contains(env, "s3cret") || strings.Contains(env, "hunter2") || strings.Contains(env, "INSECURE") {
		t.Errorf("a secret or an unset setting in:\n%s", env)
	}
}

func TestWorkFlags(t *testing.T) {
	vt, hour, three := time.Second, time.Hour, 3
	tests := []flagCase[workOptions]{
		{args: []string{"jobs", "--", "./handle.sh"}, want: workOptions{Queue: "jobs", Argv: []string{"./handle.sh"}, Concurrency: 1}},
		{args: []string{"jobs", "--concurrency", "4", "--vt", "1s", "--job-timeout", "1h", "--give-up-after", "1m", "--", "sh", "-c", "cat"},
			want: workOptions{Queue: "jobs", Argv: []string{"sh", "-c", "cat"}, Concurrency: 4, VT: &vt, JobTimeout: &hour, GiveUpAfter: time.Minute}},
		{args: []string{"jobs", "--until-empty", "--max-jobs", "3", "--", "cat"},
			want: workOptions{Queue: "jobs", Argv: []string{"cat"}, Concurrency: 1, UntilEmpty: true, MaxJobs: &three}},
		{args: []string{"jobs", "--max-jobs", "0", "--", "cmd"}, wantErr: "invalid --max-jobs 0: must be at least 1"},
		{args: []string{"jobs"}, wantErr: "want a queue and a command"},
		{args: []string{"jobs", "cmd", "--", "arg"}, wantErr: "put the command after the queue name and --"},
		{args: []string{"jobs", "--concurrency", "0", "--", "cmd"}, wantErr: "invalid --concurrency 0"},
		{args: []string{"jobs", "--vt", "50ms", "--", "cmd"}, wantErr: "invalid --vt 50ms: work needs at least 100ms"},
		{args: []string{"jobs", "--vt", "-1s", "--", "cmd"}, wantErr: "--vt -1s: must not be negative"},
		{args: []string{"jobs", "--job-timeout", "0", "--", "cmd"}, wantErr: "invalid --job-timeout 0s: must be positive"},
		{args: []string{"QUEUES", "--", "cmd"}, wantErr: "registry"},
	}
	checkFlags(t, NewCmdWork, func(o *workOptions) {
		if !slices.Contains(o.Env, "CHATQ_NAMESPACE=rsmq") {
			t.Errorf("%q: env %q", o.Argv, o.Env)
		}
		o.IO, o.Client, o.Persistent, o.Env = nil, nil, nil, nil
	}, tests)
}

// work runs CMD for each message until the queue is empty, then stops.
func TestWorkRun(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		for _, tty := range []bool{true, false} {
			newQueue(t, b, "jobs", delayq.Attributes{}, "one", "two")
			ios, out, errOut := testIO(tty, "")
			opts := &workOptions{Output: cmdutil.Output{IO: ios, JSON: !tty}, Client: testClient(b), Queue: "jobs", Argv: []string{"sh", "-c", "cat; echo"}, Concurrency: 1,
				Persistent: func(d time.Duration) *conn.Persistent { return &conn.Persistent{IO: ios, GiveUpAfter: d} }}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- workRun(ctx, opts) }()
			q, _ := testClient(b)()
			for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
				if st, err := q.Stats(context.Background(), "jobs"); err == nil && st.Messages == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("the queue did not empty")
				}
			}
			cancel()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if tty {
				// CMD's output on stdout, the outcomes on stderr.
				if out.String() != "one\ntwo\n" || strings.Count(errOut.String(), "exit 0, acked") != 2 {
					t.Fatalf("terminal: %q %q", out, errOut)
				}
			} else {
				// JSON Lines of outcomes on stdout, CMD's output on stderr.
				lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
				for _, l := range lines {
					var o workOutcomeJSON
					if err := json.Unmarshal([]byte(l), &o); err != nil || !o.Acked || o.ExitCode != 0 || o.RC != 1 {
						t.Fatalf("piped JSON line %q: %+v %v", l, o, err)
					}
				}
				if len(lines) != 2 || !strings.HasPrefix(errOut.String(), "one\ntwo\n") {
					t.Fatalf("piped: %q %q", out, errOut)
				}
			}
			if _, err := q.Delete(context.Background(), "jobs", -1); err != nil {
				t.Fatal(err)
			}
		}
	})
}
