// Package jsonfilter is what the global --jq and --template flags do to a
// command's JSON output: a jq expression (github.com/itchyny/gojq) or a Go
// text/template run on each JSON value a command prints, as the GitHub CLI
// has them. The expression is parsed and compiled when the flags are
// loaded, before any server call, so a bad one is a usage error (exit 2)
// that changed nothing; nothing here runs unless one of the flags is given.
package jsonfilter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/template/parse"

	"github.com/itchyny/gojq"
)

// Filter turns one JSON value into what is printed instead of it.
type Filter struct {
	flag  string // "--jq" or "--template", for messages
	code  *gojq.Code
	trees map[string]*parse.Tree // --template
}

// Flag is the flag the filter came from: "--jq" or "--template".
func (f *Filter) Flag() string { return f.flag }

// secretEnv are the variables jq's $ENV and env must not show: chatq never
// prints a password, even when asked to print the environment.
var secretEnv = []string{"CHATQ_PASSWORD", "REDISCLI_AUTH", "CHATQ_SENTINEL_PASSWORD"}

// JQ parses and compiles a jq expression. environ is the environment jq's
// $ENV and env see (the process's, in chatq), less the passwords.
func JQ(expr string, environ func() []string) (*Filter, error) {
	q, err := gojq.Parse(expr)
	if err != nil {
		var pe *gojq.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("invalid --jq expression: %v at offset %d: %s", err, pe.Offset, pointAt(expr, pe.Offset))
		}
		return nil, fmt.Errorf("invalid --jq expression: %v", err)
	}
	code, err := gojq.Compile(q, gojq.WithEnvironLoader(func() []string {
		var out []string
		for _, kv := range environ() {
			name, _, _ := strings.Cut(kv, "=")
			if !contains(secretEnv, name) {
				out = append(out, kv)
			}
		}
		return out
	}))
	if err != nil {
		return nil, fmt.Errorf("invalid --jq expression: %v", err)
	}
	return &Filter{flag: "--jq", code: code}, nil
}

// pointAt quotes expr with a marker where a parse error was found.
func pointAt(expr string, offset int) string {
	offset = min(max(offset, 0), len(expr))
	return fmt.Sprintf("%q", expr[:offset]+" <-- "+expr[offset:])
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Template parses a Go text/template (see exec.go for what it can do).
func Template(text string) (*Filter, error) {
	trees, err := parseTemplate(text)
	if err != nil {
		return nil, fmt.Errorf("invalid --template: %s", strings.TrimPrefix(err.Error(), "template: "))
	}
	return &Filter{flag: "--template", trees: trees}, nil
}

// RuntimeError is a filter that failed on a value it was given: the
// expression was valid but does not fit the output (`.[0]` of an object).
type RuntimeError struct {
	Flag string
	err  error
}

func (e *RuntimeError) Error() string { return e.Flag + ": " + e.err.Error() }
func (e *RuntimeError) Unwrap() error { return e.err }

// Apply runs the filter on one JSON value (data, as a command encoded it)
// and writes the result to w. A jq result that is a string is printed raw,
// any other as JSON (indented when tty), each followed by a newline. A
// template's output is written as it is; tablerow rows are aligned when tty.
func (f *Filter) Apply(w io.Writer, data []byte, tty bool) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return &RuntimeError{f.flag, fmt.Errorf("the command's output is not JSON: %v", err)}
	}
	if f.trees != nil {
		return f.execTemplate(w, v, tty)
	}
	var buf bytes.Buffer
	iter := f.code.Run(v)
	for {
		r, ok := iter.Next()
		if !ok {
			break
		}
		if err, ok := r.(error); ok {
			var halt *gojq.HaltError
			if errors.As(err, &halt) && halt.Value() == nil {
				break
			}
			// What was printed before the error stays printed, as jq does.
			_, _ = w.Write(buf.Bytes())
			return &RuntimeError{f.flag, err}
		}
		if s, ok := r.(string); ok {
			buf.WriteString(s)
		} else {
			b, err := gojq.Marshal(r)
			if err != nil {
				return &RuntimeError{f.flag, err}
			}
			if tty {
				var ind bytes.Buffer
				if json.Indent(&ind, b, "", "  ") == nil {
					b = ind.Bytes()
				}
			}
			buf.Write(b)
		}
		buf.WriteByte('\n')
	}
	_, err := w.Write(buf.Bytes())
	return err
}

// DecodeOne decodes data as exactly one JSON value, with nothing but
// whitespace around it: what -o json promises on stdout. Numbers are
// json.Number.
func DecodeOne(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if err == io.EOF {
			return nil, errors.New("no JSON value: the output is empty")
		}
		return nil, fmt.Errorf("not one JSON value: %v", err)
	}
	var extra any
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, fmt.Errorf("not one JSON value: more after the first, at byte %d", dec.InputOffset())
	}
	return v, nil
}

// DecodeLines decodes data as JSON Lines: each line exactly one JSON value,
// no blank lines, and a newline after the last. It returns the values.
func DecodeLines(data []byte) ([]any, error) {
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return nil, errors.New("not JSON Lines: the last line has no newline")
	}
	var out []any
	for i, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			break
		}
		if len(bytes.TrimSpace(line)) == 0 {
			return nil, fmt.Errorf("not JSON Lines: line %d is blank", i+1)
		}
		v, err := DecodeOne(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", i+1, err)
		}
		out = append(out, v)
	}
	return out, nil
}

// Eval runs a --jq filter on a decoded value (see DecodeOne) and returns
// every value it yields.
func (f *Filter) Eval(v any) ([]any, error) {
	if f.code == nil {
		return nil, errors.New(f.flag + " is not a jq expression")
	}
	var out []any
	iter := f.code.Run(v)
	for {
		r, ok := iter.Next()
		if !ok {
			return out, nil
		}
		if err, ok := r.(error); ok {
			return out, &RuntimeError{f.flag, err}
		}
		out = append(out, r)
	}
}
