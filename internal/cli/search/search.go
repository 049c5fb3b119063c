// Package search is the --grep and --regexp flags of the commands that
// search messages (queue peek, queue export, chat history): how they are
// added, checked before any I/O, and how a search reports what it read.
package search

import (
	"fmt"
	"regexp"
	"unicode/utf8"

	"github.com/chatq-dev/chatq/internal/cli/cmdutil"
	"github.com/chatq-dev/chatq/internal/cli/iostreams"
	"github.com/spf13/pflag"
)

// Flags are a command's --grep PATTERN and --regexp.
type Flags struct {
	Pattern string // --grep
	Regexp  bool   // --regexp: Pattern is a regular expression
}

// Add adds --grep and --regexp to fs; what says what is searched ("bodies
// and ids").
func (f *Flags) Add(fs *pflag.FlagSet, what string) {
	fs.StringVar(&f.Pattern, "grep", "", "keep only messages whose "+what+" contain PATTERN (a plain substring, case-sensitive)")
	fs.BoolVar(&f.Regexp, "regexp", false, "--grep PATTERN is a regular expression (Go's RE2 syntax, e.g. '(?i)order 47\\d+')")
}

// Given reports whether a search was asked for.
func (f *Flags) Given() bool { return f.Pattern != "" }

// Compile checks the flags (no I/O) and returns the substring to look for
// ("" when none, or when Pattern is a regular expression) and the regular
// expression (nil when none). A mistake is a usage error, with a hint.
func (f *Flags) Compile() (string, *regexp.Regexp, error) {
	switch {
	case f.Regexp && f.Pattern == "":
		return "", nil, cmdutil.WithHint(cmdutil.UsageErrorf("--regexp needs --grep PATTERN"), "give the regular expression with --grep, e.g. --grep 'order 47[0-9]+' --regexp")
	case !utf8.ValidString(f.Pattern):
		return "", nil, cmdutil.UsageErrorf("--grep: the pattern is not valid UTF-8")
	case !f.Regexp:
		return f.Pattern, nil, nil
	}
	re, err := regexp.Compile(f.Pattern)
	if err != nil {
		return "", nil, cmdutil.WithHint(cmdutil.UsageErr(fmt.Errorf("--grep %q: %w", f.Pattern, err)),
			"--regexp takes Go's RE2 syntax (https://golang.org/s/re2syntax); without --regexp, --grep looks for the text as it is")
	}
	return "", re, nil
}

// Report says on stderr how many messages a search examined and how many
// matched, so that "nothing found" is told apart from "nothing read".
func Report(io *iostreams.IOStreams, examined, matched int) {
	noun := "messages"
	if examined == 1 {
		noun = "message"
	}
	io.Infof("examined %s %s, %s matched", iostreams.Count(int64(examined)), noun, iostreams.Count(int64(matched)))
}
