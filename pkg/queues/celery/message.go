package celery

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/chatq-dev/chatq/pkg/queues"
)

// envelope is kombu's message as its Redis transport stores it (JSON):
// Celery's task protocol 2 puts the task's name, id and arguments' repr in
// headers, and [args, kwargs, embed] in the body.
type envelope struct {
	Body            string                     `json:"body"`
	ContentEncoding string                     `json:"content-encoding"`
	ContentType     string                     `json:"content-type"`
	Headers         map[string]json.RawMessage `json:"headers"`
	Properties      struct {
		BodyEncoding  string          `json:"body_encoding"`
		DeliveryTag   string          `json:"delivery_tag"`
		Priority      json.RawMessage `json:"priority"`
		CorrelationID string          `json:"correlation_id"`
		DeliveryInfo  struct {
			Exchange   string `json:"exchange"`
			RoutingKey string `json:"routing_key"`
		} `json:"delivery_info"`
	} `json:"properties"`
}

// message is one decoded message and where it stands.
type message struct {
	raw string // as stored: the list's element, or the unacked hash's value
	env envelope
	// exchange and routingKey are unacked's own record of where the
	// message was delivered from (what restore uses).
	exchange, routingKey string
	// msgRaw is the envelope's JSON alone (the first element of an
	// unacked value).
	msgRaw json.RawMessage
}

func decodeEnvelope(b []byte) (envelope, error) {
	var e envelope
	err := json.Unmarshal(b, &e)
	return e, err
}

// decodeUnacked decodes an unacked hash value: [message, exchange,
// routing_key].
func decodeUnacked(raw string) (*message, error) {
	var v []json.RawMessage
	if err := json.Unmarshal([]byte(raw), &v); err != nil || len(v) != 3 {
		return nil, fmt.Errorf("celery: unacked value is not [message, exchange, routing_key]")
	}
	m := &message{raw: raw, msgRaw: v[0]}
	var err error
	if m.env, err = decodeEnvelope(v[0]); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(v[1], &m.exchange); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(v[2], &m.routingKey); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeListed(raw string) (*message, error) {
	e, err := decodeEnvelope([]byte(raw))
	if err != nil {
		return nil, err
	}
	return &message{raw: raw, msgRaw: json.RawMessage(raw), env: e,
		exchange: e.Properties.DeliveryInfo.Exchange, routingKey: e.Properties.DeliveryInfo.RoutingKey}, nil
}

func (e *envelope) header(name string) string {
	var s string
	if raw, ok := e.Headers[name]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

func (e *envelope) headerInt(name string) int64 {
	var n int64
	if raw, ok := e.Headers[name]; ok {
		_ = json.Unmarshal(raw, &n)
	}
	return n
}

// taskID is the task's id: headers.id (protocol 2), else the
// correlation id kombu copies it to.
func (e *envelope) taskID() string {
	if id := e.header("id"); id != "" {
		return id
	}
	return e.Properties.CorrelationID
}

// eta parses headers.eta, Celery's isoformat() of when the task is due
// (zero when it has none).
func (e *envelope) eta() time.Time {
	s := e.header("eta")
	if s == "" {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// body is the payload as text: JSON as the task's arguments were
// serialized, or base64 of bytes of another content type (note says so).
func (e *envelope) body() (data, note string) {
	b := []byte(e.Body)
	if e.Properties.BodyEncoding == "base64" {
		d, err := base64.StdEncoding.DecodeString(e.Body)
		if err != nil {
			return e.Body, "body_encoding is base64 but the body does not decode"
		}
		b = d
	}
	if strings.HasPrefix(e.ContentType, "application/json") && json.Valid(b) {
		return string(b), ""
	}
	return base64.StdEncoding.EncodeToString(b), fmt.Sprintf("content-type %q: data is the body in base64", e.ContentType)
}

// job makes the Job of m in state.
func (m *message) job(state, kindState string) queues.Job {
	e := &m.env
	data, note := e.body()
	j := queues.Job{ID: e.taskID(), State: state, KindState: kindState, Name: e.header("task"), Data: data,
		Attempts: e.headerInt("retries"), Due: e.eta()}
	extra := map[string]any{"delivery_tag": e.Properties.DeliveryTag, "exchange": m.exchange, "routing_key": m.routingKey}
	for _, h := range []string{"argsrepr", "kwargsrepr", "eta", "expires", "root_id", "parent_id", "group", "origin", "timelimit", "redelivered", "shadow"} {
		if raw, ok := e.Headers[h]; ok && !bytes.Equal(raw, []byte("null")) {
			var v any
			if json.Unmarshal(raw, &v) == nil {
				extra[h] = v
			}
		}
	}
	if len(e.Properties.Priority) > 0 && string(e.Properties.Priority) != "null" {
		var v any
		if json.Unmarshal(e.Properties.Priority, &v) == nil {
			extra["priority"] = v
		}
	}
	if e.ContentType != "application/json" {
		extra["content_type"] = e.ContentType
	}
	if note != "" {
		extra["note"] = note
	}
	j.Extra = extra
	return j
}

// redelivered returns the unacked message's envelope as kombu's restore
// writes it back: headers.redelivered and
// properties.delivery_info.redelivered set to true, the rest unchanged.
func redelivered(msg json.RawMessage) (string, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(msg, &top); err != nil {
		return "", err
	}
	var set func(obj json.RawMessage, path ...string) (json.RawMessage, bool)
	set = func(obj json.RawMessage, path ...string) (json.RawMessage, bool) {
		var m map[string]json.RawMessage
		if json.Unmarshal(obj, &m) != nil || m == nil {
			return obj, false
		}
		if len(path) == 1 {
			m[path[0]] = json.RawMessage("true")
		} else {
			inner, ok := m[path[0]]
			if !ok {
				return obj, false
			}
			v, ok := set(inner, path[1:]...)
			if !ok {
				return obj, false
			}
			m[path[0]] = v
		}
		out, err := marshal(m)
		return out, err == nil
	}
	// kombu sets both in one try: a message lacking either is restored
	// as it was after the first that succeeded.
	if h, ok := top["headers"]; ok {
		v, ok := set(h, "redelivered")
		if ok {
			top["headers"] = v
			if p, ok := top["properties"]; ok {
				if v, ok := set(p, "delivery_info", "redelivered"); ok {
					top["properties"] = v
				}
			}
		}
	}
	out, err := marshal(top)
	return string(out), err
}

// marshal is json.Marshal without HTML escaping (Python's json.dumps
// escapes no '<', '>' or '&').
func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}
