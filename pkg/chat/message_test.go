package chat

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// stored builds a message the way the send script does.
func stored(id, ts, sender, message string) (string, error) {
	tail, err := messageTail(sender, message)
	return `{"id":` + id + `,"ts":` + ts + tail, err
}

func TestDecodeMessage(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Message
		err  string
	}{
		{in: `{"id":5,"ts":1795266822.123,"sender":"joe","message":"hi"}`, want: Message{5, 1795266822.123, "joe", "hi"}},
		// as the book's Python json.dumps writes it
		{in: `{"message": "caf\u00e9 \ud83d\ude00", "sender": "joe", "id": 1000001, "ts": 1795266822.1234567}`, want: Message{1000001, 1795266822.1234567, "joe", "café 😀"}},
		{in: `{"id":0,"ts":1,"sender":"joe","message":""}`, err: `"id"`},
		{in: `{"id":1,"sender":"joe","message":""}`, err: `"ts"`},
		{in: `{"id":1,"ts":1,"message":""}`, err: `"sender"`},
		{in: `{"id":1,"ts":1,"sender":"joe"}`, err: `"message"`},
		{in: `{"id":1.5,"ts":1,"sender":"joe","message":""}`, err: "bad stored message"},
		{in: `[1]`, err: "bad stored message"},
		{in: `{"id":1,"ts":1,"sender":"joe","message":"x"} trailing`, err: "bad stored message"},
	} {
		got, err := decodeMessage([]byte(tc.in))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("decodeMessage(%s) = %v, %v; want error containing %s", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("decodeMessage(%s) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestMessageTailKeepsHTMLAndSlash(t *testing.T) {
	tail, err := messageTail("joe", `</script> & "q"`)
	if want := `,"sender":"joe","message":"</script> & \"q\""}`; err != nil || tail != want {
		t.Fatalf("tail = %s, %v; want %s", tail, err, want)
	}
}

// FuzzDecodeMessage: decoding never panics, and whatever decodes encodes
// back to a message that decodes the same.
func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"id":5,"ts":1795266822.123,"sender":"joe","message":"hi"}`))
	f.Add([]byte(`{"id":1,"ts":1,"sender":"","message":"\u2028\n\"\\/"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := decodeMessage(data)
		if err != nil {
			return
		}
		if !utf8.ValidString(m.Message) {
			t.Fatalf("decoded invalid UTF-8 from %q", data)
		}
		again, err := stored("1", "2.5", m.Sender, m.Message)
		if err != nil {
			t.Fatal(err)
		}
		m2, err := decodeMessage([]byte(again))
		if err != nil || m2.Sender != m.Sender || m2.Message != m.Message {
			t.Fatalf("re-encoded %q decodes to %+v, %v", again, m2, err)
		}
	})
}

// FuzzMessageRoundTrip: any valid UTF-8 body comes back byte for byte from
// what the send script stores.
func FuzzMessageRoundTrip(f *testing.F) {
	f.Add("joe", "message 1")
	f.Add("jeff", "😀 \"quoted\"\nnew line </b> \\ \u2028 \x00")
	f.Fuzz(func(t *testing.T, sender, body string) {
		s, err := stored("1000001", "1795266822.123", sender, body)
		if !utf8.ValidString(body) {
			if err != ErrInvalidMessage {
				t.Fatalf("invalid UTF-8 body accepted: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		m, err := decodeMessage([]byte(s))
		if err != nil {
			t.Fatalf("decode %q: %v", s, err)
		}
		if m.ID != 1000001 || m.TS != 1795266822.123 || m.Message != body {
			t.Fatalf("round trip of %q gave %+v", body, m)
		}
		if utf8.ValidString(sender) && m.Sender != sender {
			t.Fatalf("sender %q came back %q", sender, m.Sender)
		}
	})
}

// A message over MaxMessageBytes is refused before any Redis call; one of
// exactly MaxMessageBytes is taken.
func TestMessageTooLong(t *testing.T) {
	if _, err := messageTail("joe", strings.Repeat("a", MaxMessageBytes+1)); !errors.Is(err, ErrMessageTooLong) {
		t.Fatalf("over the limit: %v", err)
	}
	if _, err := messageTail("joe", strings.Repeat("a", MaxMessageBytes)); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
}
