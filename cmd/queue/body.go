package queue

import (
	"encoding/base64"
	"strings"
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
