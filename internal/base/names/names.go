// Package names validates the names chatq puts into Redis keys (chat ids,
// user names, queue names, list keys) before any Redis call is made.
package names

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every error this package returns, so callers can
// map a bad name to a usage error with errors.Is.
var ErrInvalid = errors.New("invalid name")

// Error says which name was rejected and why.
type Error struct {
	Kind   string // "chat id", "user", "queue name", "list key"
	Name   string
	Reason string
}

func (e *Error) Error() string {
	return fmt.Sprintf("invalid %s %q: %s", e.Kind, e.Name, e.Reason)
}

func (e *Error) Unwrap() error { return ErrInvalid }

// Check applies the rule every name shares: non-empty, valid UTF-8, no
// whitespace or control characters, and no '{' or '}' (they would break the
// hash tags that keep an operation's keys in one cluster slot). With
// allowColon false it also rejects ':', the key separator.
func Check(kind, name string, allowColon bool) error {
	fail := func(reason string) error { return &Error{Kind: kind, Name: name, Reason: reason} }
	if name == "" {
		return fail("must not be empty")
	}
	if !utf8.ValidString(name) {
		return fail("must be valid UTF-8")
	}
	for _, r := range name {
		switch {
		case unicode.IsSpace(r):
			return fail("must not contain whitespace")
		case unicode.IsControl(r):
			return fail("must not contain control characters")
		case r == '{' || r == '}':
			return fail("must not contain '{' or '}'")
		case r == ':' && !allowColon:
			return fail("must not contain ':'")
		}
	}
	return nil
}

// Chat checks a chat id.
func Chat(id string) error { return Check("chat id", id, false) }

// User checks a user name.
func User(name string) error { return Check("user", name, true) }

// ListKey checks the key of a sharded list.
func ListKey(key string) error { return Check("list key", key, true) }

// Queue checks a queue name against RSMQ's rule: 1 to 160 characters from
// [A-Za-z0-9_-].
func Queue(name string) error {
	fail := func(reason string) error { return &Error{Kind: "queue name", Name: name, Reason: reason} }
	if name == "" {
		return fail("must not be empty")
	}
	if len(name) > 160 {
		return fail("must be at most 160 characters")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fail("may only contain letters, digits, '_' and '-'")
		}
	}
	return nil
}
