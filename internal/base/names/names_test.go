package names

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		fn   func(string) error
		name string
		ok   bool
	}{
		{Chat, "1", true},
		{Chat, "général", true},
		{Chat, "", false},
		{Chat, "a b", false},
		{Chat, "a\tb", false},
		{Chat, "a\x00b", false},
		{Chat, "a{b", false},
		{Chat, "a}b", false},
		{Chat, "a:b", false},
		{Chat, "\xff", false},
		{User, "team:joe", true},
		{User, "jo\u00a0e", false}, // no-break space is whitespace
		{User, "joe\u200b", true},  // zero-width space is a format char, not whitespace
		{ListKey, "jobs:high", true},
		{ListKey, "{jobs}", false},
		{Queue, "emails_v2-high", true},
		{Queue, "a.b", false},
		{Queue, "ünï", false},
		{Queue, strings.Repeat("q", 160), true},
		{Queue, strings.Repeat("q", 161), false},
		{Queue, "", false},
	}
	for _, tt := range tests {
		err := tt.fn(tt.name)
		if (err == nil) != tt.ok {
			t.Errorf("%q: got %v, want ok=%v", tt.name, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: error %v does not wrap ErrInvalid", tt.name, err)
		}
	}
}

func FuzzCheck(f *testing.F) {
	for _, s := range []string{"1", "a b", "x{y}", "joe:smith", "\xff\xfe", "émoji🎉"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		err := Check("name", s, true)
		if err == nil {
			if s == "" || strings.ContainsAny(s, "{} \t\r\n") {
				t.Fatalf("accepted %q", s)
			}
		} else if !errors.Is(err, ErrInvalid) {
			t.Fatalf("error %v does not wrap ErrInvalid", err)
		}
	})
}
