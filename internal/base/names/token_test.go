package names

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// tokenPattern is the rule IsToken implements, as the packages wrote it
// before: IsToken must accept exactly what it matches.
var tokenPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{16,64}$`)

func TestIsTokenMatchesPattern(t *testing.T) {
	cases := []string{
		"", "a", strings.Repeat("a", 15), strings.Repeat("a", 16), strings.Repeat("Z9_-", 16),
		strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("a", 16) + "\n",
		strings.Repeat("a", 15) + "é", strings.Repeat("é", 8), strings.Repeat("a", 16) + " ",
		"abcdefghijklmnop.", "abcdefgh/ijklmnop", strings.Repeat("a", 20) + "\x00",
	}
	// random strings over the allowed characters and a few neighbours of
	// them, of lengths around the bounds
	const alphabet = "AZaz09_-@[`{/:.~ \x00\xff"
	r := rand.New(rand.NewPCG(1, 2))
	for range 5000 {
		n := r.IntN(70)
		b := make([]byte, n)
		for i := range b {
			if r.IntN(20) == 0 {
				b[i] = alphabet[r.IntN(len(alphabet))]
			} else {
				b[i] = "abcXYZ019_-"[r.IntN(11)]
			}
		}
		cases = append(cases, string(b))
	}
	for _, s := range cases {
		if got, want := IsToken(s), tokenPattern.MatchString(s); got != want {
			t.Errorf("IsToken(%q) = %v, the pattern says %v", s, got, want)
		}
	}
}
