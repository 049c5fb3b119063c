package queue

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
		return fmt.Errorf("not valid JSON: %v", err)
	}
	return nil
}

// changedBody reports whether a decoded string has U+FFFD that the line did
// not write (a \u escape of a lone surrogate, which JSON decoding replaces).
func changedBody(line []byte, body string) bool {
	if !strings.ContainsRune(body, utf8.RuneError) {
		return false
	}
	return !bytes.ContainsRune(line, utf8.RuneError) && !bytes.Contains(bytes.ToLower(line), []byte(`\ufffd`))
}
