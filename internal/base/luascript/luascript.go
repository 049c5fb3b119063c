// Package luascript is a go-redis Script whose SHA1 is computed on first
// use rather than when the program starts: a package holding a dozen
// scripts otherwise hashes them all in its init, which every run of the
// chatq binary pays, whatever command it runs.
package luascript

import (
	"context"
	_ "embed"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Permitted is Lua text to put in front of a script that writes: it
// defines allowed({name, key, args...}, ...), which reports whether the
// script's user may run each command, on every server chatq supports
// (permitted.lua; docs/compatibility.md says how, on Redis 6.2 too).
//
//go:embed permitted.lua
var Permitted string

// Record is Lua text to put in front of a script that takes a
// client-chosen token, after Permitted (it uses allowed): it defines
// recordOf(first, field), mayRecord(first), writeRecord(first, field,
// answer, lifetime) over the 11 record keys KEYS[first..first+10], one
// HASH per minute of the client's clock (record.lua says why), and
// netstrings and fromNetstrings, which keep an answer's bytes.
//
//go:embed record.lua
var Record string

// RecordMinutes is how many minutes before the current one a repeat of a
// call with a token looks for its record in: a record lives at least 10
// minutes after it was written (RecordLifetime), and a repeat within
// those 10 minutes, by the same client's clock, is made at most 10
// minutes after the record's.
const RecordMinutes = 10

// RecordLifetime is how long a minute's hash of records lives from its
// first write (record.lua sets it then, and not at each write): a record
// written in that minute lives at least RecordMinutes after it.
const RecordLifetime = (RecordMinutes + 1) * time.Minute

// RecordKeys returns the record keys of a call with a token made at now by
// the client's clock (record.lua): before followed by the minute's
// number, Unix ms / 60000 in decimal, for this minute first and then each
// of the RecordMinutes before it; or, on a first try (firstTry: the token
// was never sent, so nothing can be recorded under it), this minute's
// alone, and the script looks nothing up. A minute has 8 digits, a token
// 16 to 64 characters: no record key of one shape is one of the other.
func RecordKeys(before string, now time.Time, firstTry bool) []string {
	m := now.UnixMilli() / 60000
	n := RecordMinutes + 1
	if firstTry {
		n = 1
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = before + strconv.FormatInt(m-int64(i), 10)
	}
	return keys
}

// RecordField is the field of the record of the call-th script call made
// with token: the token, and <token>.<call> after the first ("." is not a
// token's character, so it is no other token's field).
func RecordField(token string, call int) string {
	if call == 1 {
		return token
	}
	return token + "." + strconv.Itoa(call)
}

// Runner is what runs a script: a Script, or a go-redis *redis.Script.
type Runner interface {
	Run(ctx context.Context, c redis.Scripter, keys []string, args ...any) *redis.Cmd
}

var (
	_ Runner = (*Script)(nil)
	_ Runner = (*redis.Script)(nil)
)

// Script is a Lua script run by its SHA1 (EVALSHA, loading it once should
// the server not have it), as redis.Script.
//
// Its source is its parts joined in order: the preludes a package puts in
// front of every script (Permitted, the package's own), then the script's
// own file. A package-level Script costs one small allocation at start-up
// and no more: the parts are joined and hashed on first use, guarded by a
// sync.Once inside the struct (sync.OnceValue, a closure or a slice of the
// parts would allocate when the var is initialised, in every run of the
// binary).
type Script struct {
	parts [maxParts]string // the source's parts, in order; the rest ""
	once  sync.Once
	s     *redis.Script
}

// maxParts is the most parts a script is made of: Permitted, a record
// prelude, a package's prelude and a line that configures it, the file.
const maxParts = 6

// New returns the script whose source is parts joined in order, preludes
// first and the script's own file last (no separator: each part ends with
// its newline). Nothing is joined or hashed until the script is used.
// Every package composes its scripts this way, through its own
// writer/reader helpers that name its preludes in one list.
func New(parts ...string) *Script {
	if len(parts) > maxParts {
		panic("luascript: more than maxParts parts")
	}
	s := &Script{}
	copy(s.parts[:], parts)
	return s
}

// Source returns the script's text as sent to the server: its parts
// joined.
func (s *Script) Source() string {
	n := 0
	for _, p := range s.parts {
		n += len(p)
	}
	var b strings.Builder
	b.Grow(n)
	for _, p := range s.parts {
		b.WriteString(p)
	}
	return b.String()
}

// Script returns the go-redis script, joining the parts and hashing them
// on first call.
func (s *Script) Script() *redis.Script {
	s.once.Do(func() { s.s = redis.NewScript(s.Source()) })
	return s.s
}

// Hash returns the script's SHA1 in hex.
func (s *Script) Hash() string { return s.Script().Hash() }

// Load loads the script on the server (SCRIPT LOAD).
func (s *Script) Load(ctx context.Context, c redis.Scripter) *redis.StringCmd {
	return s.Script().Load(ctx, c)
}

// EvalSha runs the script by its SHA1.
func (s *Script) EvalSha(ctx context.Context, c redis.Scripter, keys []string, args ...any) *redis.Cmd {
	return s.Script().EvalSha(ctx, c, keys, args...)
}

// Run runs the script by its SHA1, and loads it first if the server does
// not have it.
func (s *Script) Run(ctx context.Context, c redis.Scripter, keys []string, args ...any) *redis.Cmd {
	return s.Script().Run(ctx, c, keys, args...)
}

// RunRecorded runs a script that takes a token (Record) with keys, then
// the record keys RecordKeys(before, now, firstTry), then args. A first
// try, whose script looks nothing up, is sent once (runOnce): a repeat
// is the caller's, with firstTry false. When c cannot send a command so,
// the first try is made as a repeat.
func (s *Script) RunRecorded(ctx context.Context, c redis.Scripter, keys []string, before string, now time.Time, firstTry bool, args ...any) *redis.Cmd {
	if firstTry {
		if cmd, ok := s.runOnce(ctx, c, append(slices.Clip(keys), RecordKeys(before, now, true)...), args...); ok {
			return cmd
		}
	}
	return s.Run(ctx, c, append(slices.Clip(keys), RecordKeys(before, now, false)...), args...)
}

// runOnce runs the script as Run does, but the client never sends it
// again by itself after its connection failed: go-redis re-sends a
// command whose reply was lost when MaxRetries allows, and a Cluster
// client does within MaxRedirects whatever MaxRetries says. ok is false,
// and nothing is sent, when c cannot run a command so (it has no Process
// method).
func (s *Script) runOnce(ctx context.Context, c redis.Scripter, keys []string, args ...any) (cmd *redis.Cmd, ok bool) {
	p, ok := c.(processor)
	if !ok {
		return nil, false
	}
	evalsha := func(name, script string) *redis.Cmd {
		a := make([]any, 0, 3+len(keys)+len(args))
		a = append(a, name, script, len(keys))
		for _, k := range keys {
			a = append(a, k)
		}
		cmd := redis.NewCmd(ctx, append(a, args...)...)
		if len(keys) > 0 {
			cmd.SetFirstKeyPos(3)
		}
		_ = p.Process(ctx, onceCmd{cmd})
		return cmd
	}
	cmd = evalsha("evalsha", s.Hash())
	if err := cmd.Err(); err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		cmd = evalsha("eval", s.Source())
	}
	return cmd, true
}

// processor is what runs any command: every go-redis client.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// onceCmd is a command go-redis never sends twice (NoRetry).
type onceCmd struct{ *redis.Cmd }

func (onceCmd) NoRetry() bool { return true }
