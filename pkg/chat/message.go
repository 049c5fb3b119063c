package chat

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"
)

// Message is one chat message as stored in msgs:{ID}.
type Message struct {
	ID      int64   `json:"id"`
	TS      float64 `json:"ts"` // Unix seconds, from the server's clock
	Sender  string  `json:"sender"`
	Message string  `json:"message"`
}

// MaxMessageBytes is the longest message a chat takes: 64 KiB, as RSMQ's
// queue bodies. A chat keeps each message until every member has seen it
// and hands up to a page of them to each pending call, so one message of
// megabytes would make every member's next read that big; a larger
// payload goes by reference (a URL, a key).
const MaxMessageBytes = 64 << 10

// messageTail encodes the part of a stored message after the id and ts:
// `,"sender":"…","message":"…"}`. The send script puts `{"id":N,"ts":T`
// in front of it.
func messageTail(sender, message string) (string, error) {
	if len(message) > MaxMessageBytes {
		return "", fmt.Errorf("message of %d bytes, over %d: %w", len(message), MaxMessageBytes, ErrMessageTooLong)
	}
	if !utf8.ValidString(message) {
		return "", ErrInvalidMessage
	}
	var b bytes.Buffer
	b.WriteString(`,"sender":`)
	if err := encodeString(&b, sender); err != nil {
		return "", err
	}
	b.WriteString(`,"message":`)
	if err := encodeString(&b, message); err != nil {
		return "", err
	}
	b.WriteByte('}')
	return b.String(), nil
}

func encodeString(b *bytes.Buffer, s string) error {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return err
	}
	b.Truncate(b.Len() - 1) // Encode's newline
	return nil
}

// decodeMessage parses a stored message. It accepts any JSON object with
// the four fields (as the book's Python json.dumps writes them, in any
// order) and rejects anything else, including a missing or non-positive id.
func decodeMessage(data []byte) (Message, error) {
	var m struct {
		ID      *int64   `json:"id"`
		TS      *float64 `json:"ts"`
		Sender  *string  `json:"sender"`
		Message *string  `json:"message"`
	}
	if err := json.Unmarshal(data, &m); err != nil {
		return Message{}, fmt.Errorf("bad stored message: %w", err)
	}
	switch {
	case m.ID == nil || *m.ID <= 0:
		return Message{}, errBadMessage("id")
	case m.TS == nil:
		return Message{}, errBadMessage("ts")
	case m.Sender == nil:
		return Message{}, errBadMessage("sender")
	case m.Message == nil:
		return Message{}, errBadMessage("message")
	}
	return Message{ID: *m.ID, TS: *m.TS, Sender: *m.Sender, Message: *m.Message}, nil
}

var errMessageField = errors.New("bad stored message")

func errBadMessage(field string) error {
	return fmt.Errorf("%w: missing or invalid %q", errMessageField, field)
}
