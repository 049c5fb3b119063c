package queue

import (
	"encoding/base64"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// bodyJSON returns a message body for JSON: as is when it is valid UTF-8;
// otherwise with U+FFFD for each invalid byte sequence (what JSON can
// carry) and, so that nothing is lost, the exact bytes in standard base64.
func bodyJSON(body string) (message, b64 string) {
	if utf8.ValidString(body) {
		return body, ""
	}
	return strings.ToValidUTF8(body, "\uFFFD"), base64.StdEncoding.EncodeToString([]byte(body))
}

// len16 is a body's length as RSMQ's maxsize counts it: UTF-16 code units
// (JavaScript's String length), an invalid UTF-8 byte counting one, as
// Node decodes it to U+FFFD. Bulk pushes and imports check every body
// with it before the first write; the push and import scripts check
// again.
func len16(body string) int {
	return len(utf16.Encode([]rune(body)))
}
