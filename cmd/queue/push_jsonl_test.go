package queue

import (
	"testing"
	"time"

	"github.com/chatq-dev/chatq/pkg/delayq"
)

func TestParseJSONLItem(t *testing.T) {
	def := delayq.PushOptions{Delay: time.Minute}
	tests := []struct {
		line  string
		body  string
		delay time.Duration
		at    int64 // Unix ms
		err   bool
	}{
		{line: `"plain"`, body: "plain", delay: time.Minute},
		{line: `"two\nlines"`, body: "two\nlines", delay: time.Minute},
		{line: `  "spaced"  `, body: "spaced", delay: time.Minute},
		{line: `"\ufffd is kept"`, body: "\ufffd is kept", delay: time.Minute},
		{line: `{"message":"m"}`, body: "m", delay: time.Minute},
		{line: `{"message":"m","delay":"90s"}`, body: "m", delay: 90 * time.Second},
		{line: `{"message":"m","delay":1.5}`, body: "m", delay: 1500 * time.Millisecond},
		{line: `{"message":"m","delay":1.001}`, body: "m", delay: 1001 * time.Millisecond},
		{line: `{"message":"m","delay":0}`, body: "m", delay: -1}, // no delay (0 would be the queue's)
		{line: `{"message":"m","delay":null}`, body: "m", delay: time.Minute},
		{line: `{"message":"m","at":1777626000}`, body: "m", at: 1777626000000},
		{line: `{"message":"m","at":"1777626000.5"}`, body: "m", at: 1777626000500},
		{line: `{"message":"m","at":"2026-05-01T09:00:00Z"}`, body: "m", at: 1777626000000},
		{line: `{"id":"x","message":"m","rc":3,"state":"ready","visible_at":1}`, body: "m", delay: time.Minute},
		{line: `{"message":"m","delay":1.0001}`, err: true},
		{line: `{"message":"m","delay":-1}`, err: true},
		{line: `{"message":"m","delay":"-1s"}`, err: true},
		{line: `{"message":"m","delay":1e3}`, err: true},
		{line: `{"message":"m","delay":"1s","at":1}`, err: true},
		{line: `{"message":"m","at":"tomorrow"}`, err: true},
		{line: `{"message":5}`, err: true},
		{line: `{"body":"m"}`, err: true},
		{line: `{"message":"m","message_base64":"bQ=="}`, err: true},
		{line: `"lone \ud800 surrogate"`, err: true},
		{line: `"unterminated`, err: true},
		{line: `42`, err: true},
		{line: `["m"]`, err: true},
		{line: "\"\xff\"", err: true},
	}
	for _, tt := range tests {
		it, err := parseJSONLItem([]byte(tt.line), def)
		if tt.err {
			if err == nil {
				t.Errorf("%s: no error, got %+v", tt.line, it)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.line, err)
			continue
		}
		if it.body != tt.body {
			t.Errorf("%s: body %q, want %q", tt.line, it.body, tt.body)
		}
		if tt.at != 0 {
			if it.po.At.UnixMilli() != tt.at || it.po.Delay != 0 {
				t.Errorf("%s: %+v, want at %d", tt.line, it.po, tt.at)
			}
		} else if it.po.Delay != tt.delay || !it.po.At.IsZero() {
			t.Errorf("%s: %+v, want delay %s", tt.line, it.po, tt.delay)
		}
	}
}
