package stream

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// TestIsEntryIDMatchesPattern keeps isEntryID to the pattern it replaced.
func TestIsEntryIDMatchesPattern(t *testing.T) {
	pattern := regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,20}$`)
	twenty := strings.Repeat("9", 20)
	cases := []string{
		"", "-", "1-", "-1", "1-0", "1700000000000-0", "5", "1-2-3", "a-1", "1-a", " 1-1", "1-1\n",
		twenty + "-" + twenty, twenty + "9-1", "1-" + twenty + "9", "+1-1", "١-١",
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 5000 {
		b := make([]byte, r.IntN(45))
		for i := range b {
			b[i] = "0123456789--x"[r.IntN(13)]
		}
		cases = append(cases, string(b))
	}
	for _, id := range cases {
		if got, want := isEntryID(id), pattern.MatchString(id); got != want {
			t.Errorf("isEntryID(%q) = %v, the pattern says %v", id, got, want)
		}
	}
}
