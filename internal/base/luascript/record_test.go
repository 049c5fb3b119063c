package luascript

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// recordScript records ARGV[3], a list of values given as netstrings'
// parts, under ARGV[1] in the record keys (11, or 1 on a first try), with
// lifetime ARGV[2]; or returns what is recorded there, decoded, and the
// key it was found in.
var recordScript = New(Permitted, Record, `
local r, key = recordOf(1, ARGV[1], #KEYS)
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
// its value keeps any bytes; the hash lives the lifetime given from its
// first write, which later writes do not extend; a record key of another
// type is refused before anything is written.
func TestRecordPrelude(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		m := time.UnixMilli(30_000_000 * 60_000)
		base := b.Prefix + "{q}:T:"
		call := func(at time.Time, field string, values ...any) ([]string, error) {
			return recordScript.Run(ctx, b.Client, RecordKeys(base, at, false), append([]any{field, 600000}, values...)...).StringSlice()
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
		// A later write into the same hash leaves its lifetime as the
		// first write set it.
		if err := b.Client.PExpire(ctx, base+"30000000", 5*time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if got, err := call(m, "tok.3", "y"); err != nil || !slices.Equal(got, []string{"written"}) {
			t.Errorf("a third field: %q %v", got, err)
		}
		if ttl, err := b.Client.PTTL(ctx, base+"30000000").Result(); err != nil || ttl > 5*time.Minute || ttl < 4*time.Minute {
			t.Errorf("after a later write the hash's PTTL is %v (%v); want the 5m left, not set again", ttl, err)
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

// RecordKeys names this minute first, then the 10 before it, and this
// minute alone on a first try; RecordField leaves the first call's field
// the bare token.
func TestRecordKeys(t *testing.T) {
	keys := RecordKeys("p:", time.UnixMilli(30_000_000*60_000+59_999), false)
	if len(keys) != 11 || keys[0] != "p:30000000" || keys[10] != "p:29999990" {
		t.Errorf("RecordKeys: %q", keys)
	}
	if keys := RecordKeys("p:", time.UnixMilli(30_000_000*60_000), true); !slices.Equal(keys, []string{"p:30000000"}) {
		t.Errorf("RecordKeys of a first try: %q", keys)
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
	keys := RecordKeys(b.Prefix+"{q}:T:", time.Now(), false)
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

// A first try passes this minute's key alone: nothing is looked up (a
// record there is not returned: a first try's token was never sent), the
// record is written, and a key of another type there is refused before
// anything is written. RunRecorded sends a first try with that one key and
// a repeat with the 11.
func TestRecordFirstTry(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := context.Background()
		m := time.UnixMilli(30_000_000 * 60_000)
		base := b.Prefix + "{q}:T:"
		run := func(at time.Time, firstTry bool, field string, values ...any) ([]string, error) {
			return recordScript.RunRecorded(ctx, b.Client, nil, base, at, firstTry, append([]any{field, 600000}, values...)...).StringSlice()
		}
		if got, err := run(m, true, "tok", "v"); err != nil || !slices.Equal(got, []string{"written"}) {
			t.Fatalf("first try: %q %v", got, err)
		}
		if n, err := b.Client.HLen(ctx, base+"30000000").Result(); err != nil || n != 1 {
			t.Fatalf("after a first try minute m's hash has %d fields (%v); want 1", n, err)
		}
		if got, err := run(m.Add(time.Minute), false, "tok", "other"); err != nil || !slices.Equal(got, []string{base + "30000000", "v"}) {
			t.Errorf("repeat: %q %v; want the first try's record", got, err)
		}
		// A first try with a token already recorded (a caller's mistake)
		// looks nothing up: it is applied and recorded again.
		if got, err := run(m, true, "tok", "w"); err != nil || !slices.Equal(got, []string{"written"}) {
			t.Errorf("a first try of a recorded token: %q %v; want it written (nothing looked up)", got, err)
		}
		if err := b.Client.Set(ctx, base+"30000001", "x", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		if got, err := run(m.Add(time.Minute), true, "new", "x"); err == nil || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Errorf("a first try onto a string: %q %v; want WRONGTYPE", got, err)
		}
		if typ, _ := b.Client.Type(ctx, base+"30000001").Result(); typ != "string" {
			t.Errorf("the refused first try changed the key: now a %s", typ)
		}
	})
}

// countScript counts its runs in KEYS[1] and records the count under
// ARGV[1], or returns the count recorded there.
var countScript = New(Permitted, Record, `
local r = recordOf(2, ARGV[1], #KEYS)
if r then
  return tonumber(r)
end
if not mayRecord(2) then
  return redis.error_reply('NOPERM record')
end
local n = redis.call('INCR', KEYS[1])
writeRecord(2, ARGV[1], tostring(n), ARGV[2])
return n
`)

// A first try is sent once: through a proxy that loses its reply, a
// go-redis client that re-sends a command whose reply was lost
// (MaxRetries 3, go-redis's default) returns the error instead of sending
// it again, which would apply it a second time (it looks nothing up); the
// caller's repeat, with the lookups, gets the first answer. A repeat that
// loses its reply is re-sent by go-redis itself, safely.
func TestFirstTryIsSentOnce(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		redistest.SlowOnEmbedded(t, "waits for a read timeout")
		ctx := context.Background()
		pb, proxy := redistest.Proxied(t, b)
		opt, err := redis.ParseURL(pb.URL)
		if err != nil {
			t.Fatal(err)
		}
		opt.MaxRetries = 3
		opt.ReadTimeout = 500 * time.Millisecond
		c := redis.NewClient(opt)
		defer c.Close()
		counter, base := b.Prefix+"{q}:n", b.Prefix+"{q}:T:"
		call := func(firstTry bool, token string) (int64, error) {
			return countScript.RunRecorded(ctx, c, []string{counter}, base, time.Now(), firstTry, token, 600000).Int64()
		}
		if err := countScript.Load(ctx, c).Err(); err != nil {
			t.Fatal(err)
		}
		proxy.DropReplyTo(counter)
		if n, err := call(true, "firsttrytoken000"); err == nil {
			t.Fatalf("a first try whose reply was lost answered %d: go-redis sent it again", n)
		}
		if n, err := b.Client.Get(ctx, counter).Int64(); err != nil || n != 1 {
			t.Fatalf("after the lost first try the script ran %d times (%v); want 1", n, err)
		}
		if n, err := call(false, "firsttrytoken000"); err != nil || n != 1 {
			t.Errorf("the repeat: %d %v; want the first try's answer, 1", n, err)
		}
		proxy.DropReplyTo(counter)
		if n, err := call(false, "repeatedtoken000"); err != nil || n != 2 {
			t.Errorf("a repeat whose reply was lost, re-sent by go-redis: %d %v; want 2", n, err)
		}
		if n, err := b.Client.Get(ctx, counter).Int64(); err != nil || n != 2 {
			t.Errorf("the script applied %d times in all (%v); want 2", n, err)
		}
	})
}
