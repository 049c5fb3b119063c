package luascript

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
)

// recordScript records ARGV[3], a list of values given as netstrings'
// parts, under ARGV[1] in the 11 record keys, with lifetime ARGV[2]; or
// returns what is recorded there, decoded, and the key it was found in.
var recordScript = New(Permitted, Record, `
local r, key = recordOf(1, ARGV[1])
if r then
  local t = fromNetstrings(r)
  if not t then
    return redis.error_reply('ERR ' .. key .. ' ' .. ARGV[1] .. ': not netstrings')
  end
  table.insert(t, 1, key)
  return t
end
if not mayRecord(1) then
  return redis.error_reply('NOPERM record')
end
writeRecord(1, ARGV[1], netstrings({unpack(ARGV, 3)}), ARGV[2])
return {'written'}
`)

// The records' prelude: a record written in minute m's hash is found by
// a call in minute m+10, from its 11 keys, and by none in minute m+11;
// its value keeps any bytes; the hash lives the lifetime given after each
// write; a record key of another type is refused before anything is
// written.
func TestRecordPrelude(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		m := time.UnixMilli(30_000_000 * 60_000)
		base := b.Prefix + "{q}:T:"
		call := func(at time.Time, field string, values ...any) ([]string, error) {
			return recordScript.Run(ctx, b.Client, RecordKeys(base, at), append([]any{field, 600000}, values...)...).StringSlice()
		}
		raw := "\xff\x00:1:\xfe"
		if got, err := call(m, "tok", raw, 12); err != nil || !slices.Equal(got, []string{"written"}) {
			t.Fatalf("first call: %q %v", got, err)
		}
		want := []string{base + "30000000", raw, "12"}
		for _, at := range []time.Time{m.Add(59 * time.Second), m.Add(10*time.Minute + 59*time.Second)} {
			if got, err := call(at, "tok", "other"); err != nil || !slices.Equal(got, want) {
				t.Errorf("repeat at %v: %q %v; want %q", at.Sub(m), got, err, want)
			}
		}
		if got, err := call(m.Add(11*time.Minute), "tok", "again"); err != nil || !slices.Equal(got, []string{"written"}) {
			t.Errorf("repeat in minute m+11: %q %v; want a new record", got, err)
		}
		if got, err := call(m, "tok.2", "x"); err != nil || !slices.Equal(got, []string{"written"}) {
			t.Errorf("the second call's field: %q %v; want a record of its own", got, err)
		}
		if ttl, err := b.Client.PTTL(ctx, base+"30000000").Result(); err != nil || ttl > 10*time.Minute || ttl < 9*time.Minute {
			t.Errorf("the hash's PTTL is %v (%v); want at most 10m, about that", ttl, err)
		}
		// A string among the 11 keys: WRONGTYPE, nothing written.
		if err := b.Client.Set(ctx, base+"30000005", "x", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		before, _ := b.Client.HLen(ctx, base+"30000010").Result()
		if got, err := call(m.Add(10*time.Minute), "new", "x"); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Errorf("a string among the record keys: %q %v; want WRONGTYPE", got, err)
		}
		if after, _ := b.Client.HLen(ctx, base+"30000010").Result(); after != before {
			t.Errorf("a refused call wrote a record: %d fields, were %d", after, before)
		}
		// A record that is not netstrings is reported with its key.
		if err := b.Client.HSet(ctx, base+"30000000", "bad", "9:short").Err(); err != nil {
			t.Fatal(err)
		}
		if _, err := call(m.Add(time.Minute), "bad"); err == nil || !strings.Contains(err.Error(), base+"30000000 bad") {
			t.Errorf("a corrupt record: %v; want an error naming its key", err)
		}
	})
}

// RecordKeys names this minute first, then the 10 before it; RecordField
// leaves the first call's field the bare token.
func TestRecordKeys(t *testing.T) {
	keys := RecordKeys("p:", time.UnixMilli(30_000_000*60_000+59_999))
	if len(keys) != 11 || keys[0] != "p:30000000" || keys[10] != "p:29999990" {
		t.Errorf("RecordKeys: %q", keys)
	}
	if f := RecordField("tok", 1) + " " + RecordField("tok", 3); f != "tok tok.3" {
		t.Errorf("RecordField: %s", f)
	}
}

// mayRecord refuses a user who may not HSET or PEXPIRE the record key,
// before anything is written: on Redis 7 by redis.acl_check_cmd, on Redis
// 6.2 by the probes of permitted.lua (PEXPIRE key x fails as "not an
// integer" after the ACL check, or as the ACL's refusal before it).
func TestRecordRefused(t *testing.T) {
	b := redistest.Real(t)
	redistest.NeedACL(t, b)
	ctx := context.Background()
	keys := RecordKeys(b.Prefix+"{q}:T:", time.Now())
	for _, cmd := range []string{"hset", "pexpire"} {
		user := redistest.ACLUser(t, b, "chatqtest-no-"+cmd, "~*", "&*", "+@all", "-"+cmd)
		_, err := recordScript.Run(ctx, user, keys, "tok", 600000, "v").Result()
		if err == nil || !strings.HasPrefix(err.Error(), "NOPERM record") {
			t.Errorf("without %s: %v; want NOPERM record", cmd, err)
		}
		if n, err := b.Client.Exists(ctx, keys...).Result(); err != nil || n != 0 {
			t.Errorf("without %s: %d record keys written (%v)", cmd, n, err)
		}
	}
	if _, err := recordScript.Run(ctx, b.Client, keys, "tok", 600000, "v").Result(); err != nil {
		t.Errorf("with every command: %v", err)
	}
}
