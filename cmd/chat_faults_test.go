package cmd

import (
	"crypto/sha1"
	"encoding/hex"
	"os"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/base/luascript"
	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// chatScriptSHA is the SHA1 that EVALSHA names a pkg/chat script by: a
// script that writes opens with luascript.Permitted; mark.lua and
// marks.lua with lib.lua after it (chat.go's markScriptOf).
func chatScriptSHA(t *testing.T, file string, writes bool) string {
	src, err := os.ReadFile("../pkg/chat/" + file)
	if err != nil {
		t.Fatal(err)
	}
	if file == "mark.lua" || file == "marks.lua" {
		lib, err := os.ReadFile("../pkg/chat/lib.lua")
		if err != nil {
			t.Fatal(err)
		}
		src = append(lib, src...)
	}
	if writes {
		src = append([]byte(luascript.Permitted), src...)
	}
	sum := sha1.Sum(src)
	return hex.EncodeToString(sum[:])
}

func mustRun(t *testing.T, b redistest.Backend, args ...string) string {
	t.Helper()
	code, stdout, stderr := run(t.Context(), b, args...)
	if code != 0 {
		t.Fatalf("%v: exit %d: %s", args, code, stderr)
	}
	return stdout
}

// TestChatPendingBadDataHidesNothing: a stored value that is not a message
// is reported once (chat and id) and the messages around it and in other
// chats are printed; a chat whose key has the wrong type is reported, exit
// 1, while the others are printed and marked.
func TestChatPendingBadDataHidesNothing(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		mustRun(t, b, "chat", "create", "--from", "joe", "--to", "jeff", "--id", "1", "in 1")
		mustRun(t, b, "chat", "create", "--from", "joe", "--to", "jeff", "--id", "2", "in 2")
		b.Client.ZAdd(ctx, b.Prefix+"msgs:{1}", redis.Z{Score: 3, Member: "not json"})
		code, stdout, stderr := run(ctx, b, "chat", "pending", "jeff")
		if code != 0 || stdout != "1\t1\tjoe\tin 1\n2\t1\tjoe\tin 2\n" || !strings.Contains(stderr, "chat 1: message 3 is not a chat message") {
			t.Fatalf("pending: exit %d\n%s%s", code, stdout, stderr)
		}
		if code, stdout, stderr := run(ctx, b, "chat", "pending", "jeff"); code != 0 || stdout != "" {
			t.Fatalf("second pending: exit %d\n%s%s", code, stdout, stderr)
		}

		mustRun(t, b, "chat", "send", "1", "--from", "joe", "m2")
		mustRun(t, b, "chat", "send", "2", "--from", "joe", "m2")
		b.Client.Del(ctx, b.Prefix+"chat:{2}")
		b.Client.Set(ctx, b.Prefix+"chat:{2}", "garbage", 0)
		for round := range 2 {
			want := "1\t2\tjoe\tm2\n"
			if round == 1 {
				want = ""
			}
			code, stdout, stderr := run(ctx, b, "chat", "pending", "jeff")
			if code != cmdutil.ExitError || stdout != want || !strings.Contains(stderr, "chat:{2} is a string") ||
				!strings.Contains(stderr, "1 chat(s) could not be read") {
				t.Fatalf("round %d: pending with a broken chat: exit %d\n%s%s", round, code, stdout, stderr)
			}
		}
		code, stdout, stderr = run(ctx, b, "-o", "json", "chat", "pending", "jeff", "--peek")
		if code != cmdutil.ExitError || !strings.Contains(stdout, `{"chat_id":"2","messages":[],"error":"chat 2: WRONGTYPE `) {
			t.Fatalf("pending --peek -o json with a broken chat: exit %d\n%s%s", code, stdout, stderr)
		}
		code, stdout, stderr = run(ctx, b, "chat", "ls", "jeff")
		if code != cmdutil.ExitError || stdout != "1\t2\t1\n" || !strings.Contains(stderr, "chat:{2} is a string") {
			t.Fatalf("ls with a broken chat: exit %d\n%s%s", code, stdout, stderr)
		}
	})
}

// TestChatPendingLostReplies: a lost reply to the read marks nothing
// (exit 1, nothing printed, everything printed next time); a lost reply to
// the marking comes after the messages were printed (exit 4).
func TestChatPendingLostReplies(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		pb, p := redistest.Proxied(t, b)
		mustRun(t, pb, "chat", "create", "--from", "joe", "--to", "jeff", "hi")
		mustRun(t, pb, "chat", "pending", "joe") // loads the scripts

		p.DropReplyTo(chatScriptSHA(t, "fetch.lua", false))
		code, stdout, stderr := run(ctx, pb, "--timeout", "1s", "chat", "pending", "jeff")
		if code != cmdutil.ExitError || stdout != "" || !strings.Contains(stderr, "nothing was marked seen") {
			t.Fatalf("lost read: exit %d\n%s%s", code, stdout, stderr)
		}

		p.DropReplyTo(chatScriptSHA(t, "mark.lua", true))
		code, stdout, stderr = run(ctx, pb, "--timeout", "1s", "chat", "pending", "jeff")
		if code != cmdutil.ExitMaybeApplied || stdout != "1\t1\tjoe\thi\n" || !strings.Contains(stderr, "may have applied") {
			t.Fatalf("lost mark: exit %d\n%s%s", code, stdout, stderr)
		}
		// It did apply: nothing is printed twice.
		if code, stdout, stderr := run(ctx, b, "chat", "pending", "jeff"); code != 0 || stdout != "" {
			t.Fatalf("after the lost mark: exit %d\n%s%s", code, stdout, stderr)
		}
	})
}

// TestChatLeaveStaleEntry: leaving a chat one is not in fails, writing
// nothing, unless the user's chat list still names it: that stale entry is
// removed and leave says so.
func TestChatLeaveStaleEntry(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		mustRun(t, b, "chat", "create", "--from", "joe", "--to", "jeff", "hi")
		b.Client.ZAdd(ctx, b.Prefix+"seen:{sam}", redis.Z{Score: 0, Member: "1"})
		code, stdout, stderr := run(ctx, b, "-o", "json", "chat", "leave", "1", "sam")
		if code != 0 || !strings.Contains(stdout, `"stale_entry_removed":true`) || !strings.Contains(stderr, "sam was not in chat 1") {
			t.Fatalf("leave with a stale entry: exit %d\n%s%s", code, stdout, stderr)
		}
		if code, _, stderr := run(ctx, b, "chat", "leave", "1", "sam"); code != cmdutil.ExitError || !strings.Contains(stderr, "not a member") {
			t.Fatalf("leave again: exit %d\n%s", code, stderr)
		}
	})
}
