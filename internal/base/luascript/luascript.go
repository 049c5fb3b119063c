// Package luascript is a go-redis Script whose SHA1 is computed on first
// use rather than when the program starts: a package holding a dozen
// scripts otherwise hashes them all in its init, which every run of the
// chatq binary pays, whatever command it runs.
package luascript

import (
	"context"
	_ "embed"
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

// RecordMinutes is how many minutes before the current one a call with a
// token looks for its record in: a record lives at least 10 minutes after
// it was written (ARGV's lifetime, set again by each write to its
// minute's hash), and a repeat within those 10 minutes, by the same
// client's clock, is made at most 10 minutes after the record's.
const RecordMinutes = 10

// RecordKeys returns the 1+RecordMinutes record keys of a call with a
// token made at now by the client's clock (record.lua): before followed by
// the minute's number, Unix ms / 60000 in decimal, for this minute first
// and then each of the RecordMinutes before it. A minute has 8 digits, a
// token 16 to 64 characters: no record key of one shape is one of the
// other.
func RecordKeys(before string, now time.Time) []string {
	m := now.UnixMilli() / 60000
	keys := make([]string, RecordMinutes+1)
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
