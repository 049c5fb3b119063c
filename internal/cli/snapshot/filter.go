package snapshot

import (
	"fmt"
	"regexp"
	"strings"
)

// Filter chooses names by globs, in the syntax of Redis's MATCH: * any
// characters, ? one, [abc] or [a-z] one of a set ([^a] or [!a] one not in
// it), \ to take the next character as it is. A name is kept when it
// matches one of the include globs (or there are none) and none of the
// exclude globs. The nil Filter keeps every name.
type Filter struct {
	include, exclude []*regexp.Regexp
}

// NewFilter compiles include and exclude globs; an error names the first
// malformed one.
func NewFilter(include, exclude []string) (*Filter, error) {
	f := &Filter{}
	for _, g := range include {
		re, err := compileGlob(g)
		if err != nil {
			return nil, err
		}
		f.include = append(f.include, re)
	}
	for _, g := range exclude {
		re, err := compileGlob(g)
		if err != nil {
			return nil, err
		}
		f.exclude = append(f.exclude, re)
	}
	return f, nil
}

// Match reports whether name is kept.
func (f *Filter) Match(name string) bool {
	if f == nil {
		return true
	}
	kept := len(f.include) == 0
	for _, re := range f.include {
		if re.MatchString(name) {
			kept = true
			break
		}
	}
	if !kept {
		return false
	}
	for _, re := range f.exclude {
		if re.MatchString(name) {
			return false
		}
	}
	return true
}

// compileGlob turns a glob into an anchored regular expression.
func compileGlob(g string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(g); i++ {
		switch ch := g[i]; ch {
		case '*':
			b.WriteString(`.*`)
		case '?':
			b.WriteString(`.`)
		case '\\':
			if i+1 == len(g) {
				return nil, fmt.Errorf("glob %q ends with a lone \\", g)
			}
			i++
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		case '[':
			end := strings.IndexByte(g[i+1:], ']')
			if end < 0 {
				return nil, fmt.Errorf("glob %q has a [ without its ]", g)
			}
			set := g[i+1 : i+1+end]
			i += end + 1
			neg := strings.HasPrefix(set, "^") || strings.HasPrefix(set, "!")
			if neg {
				set = set[1:]
			}
			if set == "" {
				return nil, fmt.Errorf("glob %q has an empty []", g)
			}
			b.WriteByte('[')
			if neg {
				b.WriteByte('^')
			}
			for j := 0; j < len(set); j++ {
				switch c := set[j]; {
				case c == '-' && j > 0 && j < len(set)-1:
					b.WriteByte('-')
				case c == '\\' && j+1 < len(set):
					j++
					b.WriteString(regexp.QuoteMeta(set[j : j+1]))
				default:
					b.WriteString(regexp.QuoteMeta(string(c)))
				}
			}
			b.WriteByte(']')
		default:
			b.WriteString(regexp.QuoteMeta(g[i : i+1]))
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		return nil, fmt.Errorf("glob %q: %v", g, err)
	}
	return re, nil
}
