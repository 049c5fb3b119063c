package cmdutil

import (
	"bytes"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/conn"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/redis/go-redis/v9"
)

// --askpass reads the password once, when the client is built, and it
// wins over the URL's and the environment's.
func TestAskPass(t *testing.T) {
	asked := 0
	f := &Factory{IO: &iostreams.IOStreams{ErrOut: &bytes.Buffer{}}, ReadPassword: func() (string, error) { asked++; return "typed", nil }}
	f.Load(&conn.Config{URL: "redis://u:inurl@127.0.0.1:6379", Password: "env", AskPass: true, Timeout: time.Second}, nil)
	c, err := f.Client()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Client(); err != nil {
		t.Fatal(err)
	}
	if o := c.(*redis.Client).Options(); o.Password != "typed" || o.Username != "u" || asked != 1 {
		t.Errorf("password %q user %q, asked %d times", o.Password, o.Username, asked)
	}
}
