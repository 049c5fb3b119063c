package queue

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"unicode/utf8"
)

// lineReader reads JSON Lines one at a time, numbering them from 1, so that
// a file of any size streams; a line may be as long as a body allows.
type lineReader struct {
	sc   *bufio.Scanner
	line int
}

func newLineReader(r io.Reader) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 512*1024*1024)
	return &lineReader{sc: sc}
}

// next returns the next line that is not blank (false at the end).
func (r *lineReader) next() ([]byte, bool) {
	for r.sc.Scan() {
		r.line++
		b := bytes.TrimRight(r.sc.Bytes(), "\r")
		if len(bytes.TrimSpace(b)) > 0 {
			return b, true
		}
	}
	return nil, false
}

func (r *lineReader) err() error { return r.sc.Err() }

// decodeLine decodes one JSON line into v, refusing what encoding/json
// would silently change: bytes that are not UTF-8, and \u escapes of lone
// surrogates (both become U+FFFD).
func decodeLine(b []byte, v any) error {
	if !utf8.Valid(b) {
		return fmt.Errorf("not valid UTF-8 (a body that is not UTF-8 goes in message_base64)")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return jsonLineError(err)
	}
	return nil
}

// jsonLineError says what is wrong with a line in JSON's words: a field of
// the wrong type ("message" is a number, want a string), or where the JSON
// breaks; never a Go type or struct.
func jsonLineError(err error) error {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return fmt.Errorf("%q is %s, want %s", te.Field, jsonKind(te.Value), goKind(te.Type))
	case errors.As(err, &te):
		return fmt.Errorf("the line is %s, want %s", jsonKind(te.Value), goKind(te.Type))
	case errors.As(err, &se):
		return fmt.Errorf("not valid JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	}
	return fmt.Errorf("not valid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// jsonKind names a JSON value kind as encoding/json reports it.
func jsonKind(v string) string {
	switch {
	case v == "object", v == "array":
		return "an " + v
	case strings.HasPrefix(v, "number"):
		return "a number"
	case v == "bool":
		return "a boolean"
	}
	return "a " + v
}

// goKind names the JSON a Go type takes.
func goKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == reflect.TypeFor[json.Number]():
		return "a number"
	case t == reflect.TypeFor[json.RawMessage]():
		return "a JSON value"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	}
	return "another kind of value"
}

// changedBody reports whether a decoded string has U+FFFD that the line did
// not write (a \u escape of a lone surrogate, which JSON decoding replaces).
func changedBody(line []byte, body string) bool {
	if !strings.ContainsRune(body, utf8.RuneError) {
		return false
	}
	return !bytes.ContainsRune(line, utf8.RuneError) && !bytes.Contains(bytes.ToLower(line), []byte(`\ufffd`))
}
