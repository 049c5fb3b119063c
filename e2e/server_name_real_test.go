package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/cmd"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/redis/go-redis/v9"
)

// TestServerNamed checks, on the real server, that ping and top name it
// and its version as its INFO does: Valkey 7.2 says "redis" in HELLO, and
// Valkey's redis_version stays at 7.2.4 whatever its own version.
func TestServerNamed(t *testing.T) {
	url := gate(t, "CHATQ_TEST_REDIS_URL", "CHATQ_REQUIRE_REDIS")
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	admin := redis.NewClient(opt)
	defer admin.Close()
	info, err := admin.Info(ctx, "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	field := func(name string) string {
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, name+":"); ok {
				return v
			}
		}
		return ""
	}
	want := struct{ Server, Version string }{"redis", field("redis_version")}
	if field("server_name") == "valkey" {
		want.Server, want.Version = "valkey", field("valkey_version")
	}
	run := func(args ...string) []byte {
		t.Helper()
		var out, errOut bytes.Buffer
		io := &iostreams.IOStreams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}
		if code := cmd.Run(ctx, append([]string{"--url", url}, args...), io, func(string) string { return "" }); code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		return out.Bytes()
	}
	var ping struct{ Server, Version string }
	if err := json.Unmarshal(run("ping", "-o", "json"), &ping); err != nil {
		t.Fatal(err)
	}
	if ping != want {
		t.Errorf("ping says %+v, INFO %+v", ping, want)
	}
	var top struct {
		Server struct{ Server, Version string }
	}
	if err := json.Unmarshal(run("top", "--once", "-o", "json", "--interval", "0"), &top); err != nil {
		t.Fatal(err)
	}
	if top.Server != want {
		t.Errorf("top says %+v, INFO %+v", top.Server, want)
	}
}
