package clierr

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

// Each kind is recognised through wrapping, and a hint the error carries
// comes before the check of a write that may have been applied.
func TestKinds(t *testing.T) {
	lost := fmt.Errorf("push: %w", io.EOF)
	for _, tc := range []struct {
		name                    string
		err                     error
		usage, refused, applied bool
		hint                    string
	}{
		{"usage", fmt.Errorf("wrapped: %w", Usagef("bad %s", "x")), true, false, false, ""},
		{"usage with a hint", WithHint(Usage(errors.New("bad")), "do this"), true, false, false, "do this"},
		{"refused", fmt.Errorf("delete: %w", Refusedf("holds %d messages", 3)), true, true, false, ""},
		{"lost reply", MaybeApplied(lost, "chatq queue peek jobs"), false, false, true, "check with `chatq queue peek jobs` before retrying, so that a retry does not apply it twice"},
		{"lost reply, no check", MaybeApplied(lost, ""), false, false, true, "check the server's state before retrying, so that a retry does not apply it twice"},
		{"own hint in a lost reply", MaybeApplied(WithHint(lost, "resume from 7"), "x"), false, false, true, "resume from 7"},
		{"output failed", OutputFailed(errors.New("jq: bad"), "chatq queue stats jobs"), false, false, true, "do not run it again to see the output: the change is made; `chatq queue stats jobs` shows the result; try an expression on `-o json` output first"},
		{"plain", errors.New("x"), false, false, false, ""},
	} {
		if got := IsUsage(tc.err); got != tc.usage {
			t.Errorf("%s: IsUsage %v, want %v", tc.name, got, tc.usage)
		}
		if got := IsRefused(tc.err); got != tc.refused {
			t.Errorf("%s: IsRefused %v, want %v", tc.name, got, tc.refused)
		}
		if got := IsMaybeApplied(tc.err); got != tc.applied {
			t.Errorf("%s: IsMaybeApplied %v, want %v", tc.name, got, tc.applied)
		}
		if got := Hint(tc.err); got != tc.hint {
			t.Errorf("%s: hint %q, want %q", tc.name, got, tc.hint)
		}
	}
	// Marked twice, a lost reply is wrapped once.
	once := MaybeApplied(lost, "a")
	if MaybeApplied(once, "b") != once {
		t.Error("a maybe-applied error marked again was wrapped again")
	}
	if WithHint(nil, "h") != nil {
		t.Error("WithHint(nil) is not nil")
	}
}
