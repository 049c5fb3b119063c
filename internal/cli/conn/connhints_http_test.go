package conn

import (
	"errors"
	"strings"
	"testing"
)

// A server that answers in HTTP gets a hint naming it, whatever the first
// line go-redis quotes; a Redis protocol error gets none.
func TestSpeaksHTTPHint(t *testing.T) {
	for _, tc := range []struct {
		msg  string
		http bool
	}{
		{`redis: invalid reply: "<!DOCTYPE HTML>\n"`, true},
		{`redis: invalid reply: "HTTP/1.1 400 Bad Request\r\n"`, true},
		{`redis: invalid reply: "<html><head>"`, true},
		{`redis: invalid reply: "Server: nginx"`, true},
		{`redis: invalid reply: "\x15\x03\x01"`, false},
		{`ERR unknown command 'GET /'`, false},
	} {
		h := FailureHint(errors.New(tc.msg), nil, nil)
		if got := strings.Contains(h, "speaks HTTP"); got != tc.http {
			t.Errorf("%q: hint %q", tc.msg, h)
		}
	}
}
