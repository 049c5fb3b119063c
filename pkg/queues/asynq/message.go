package asynq

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/encoding/protowire"
)

// The field numbers of asynq's TaskMessage (internal/proto/asynq.proto,
// the same in 0.23 to 0.26 but for headers, which 0.26 added).
const (
	fieldType         = 1
	fieldPayload      = 2
	fieldID           = 3
	fieldQueue        = 4
	fieldRetry        = 5
	fieldRetried      = 6
	fieldErrorMsg     = 7
	fieldTimeout      = 8
	fieldDeadline     = 9
	fieldUniqueKey    = 10
	fieldLastFailedAt = 11
	fieldRetention    = 12
	fieldCompletedAt  = 13
	fieldGroupKey     = 14
	fieldHeaders      = 15
	lastKnownField    = fieldHeaders
)

// message is a TaskMessage as asynq encodes it in a task hash's msg field.
type message struct {
	Type         string
	Payload      []byte
	Headers      map[string]string
	ID           string
	Queue        string
	Retry        int64
	Retried      int64
	ErrorMsg     string
	LastFailedAt int64 // Unix seconds, 0: never failed
	Timeout      int64 // seconds
	Deadline     int64 // Unix seconds
	UniqueKey    string
	GroupKey     string
	Retention    int64 // seconds
	CompletedAt  int64 // Unix seconds
	// Unknown is the numbers of fields no asynq chatq knows writes (a
	// newer layout): chatq reads such a message but does not rewrite it.
	Unknown []protowire.Number
}

// errMessage is a msg field that is not a TaskMessage.
var errMessage = errors.New("asynq: task message is not a TaskMessage")

// decodeMessage decodes a TaskMessage with protowire, as asynq's own
// (generated) decoder would, without importing asynq.
func decodeMessage(b []byte) (*message, error) {
	m := &message{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", errMessage, protowire.ParseError(n))
		}
		b = b[n:]
		var want protowire.Type
		switch num {
		case fieldType, fieldPayload, fieldID, fieldQueue, fieldErrorMsg, fieldUniqueKey, fieldGroupKey, fieldHeaders:
			want = protowire.BytesType
		case fieldRetry, fieldRetried, fieldTimeout, fieldDeadline, fieldLastFailedAt, fieldRetention, fieldCompletedAt:
			want = protowire.VarintType
		default:
			m.Unknown = append(m.Unknown, num)
			want = typ
		}
		if typ != want {
			return nil, fmt.Errorf("%w: field %d has wire type %d", errMessage, num, typ)
		}
		var (
			v   uint64
			raw []byte
		)
		if typ == protowire.VarintType {
			v, n = protowire.ConsumeVarint(b)
		} else if typ == protowire.BytesType {
			raw, n = protowire.ConsumeBytes(b)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return nil, fmt.Errorf("%w: field %d: %v", errMessage, num, protowire.ParseError(n))
		}
		b = b[n:]
		switch num {
		case fieldType:
			m.Type = string(raw)
		case fieldPayload:
			m.Payload = slices.Clone(raw)
		case fieldID:
			m.ID = string(raw)
		case fieldQueue:
			m.Queue = string(raw)
		case fieldErrorMsg:
			m.ErrorMsg = string(raw)
		case fieldUniqueKey:
			m.UniqueKey = string(raw)
		case fieldGroupKey:
			m.GroupKey = string(raw)
		case fieldHeaders:
			k, val, err := decodeHeader(raw)
			if err != nil {
				return nil, err
			}
			if m.Headers == nil {
				m.Headers = map[string]string{}
			}
			m.Headers[k] = val
		case fieldRetry, fieldRetried:
			// int32: a negative value is sign-extended to ten bytes.
			x := int64(int32(v))
			if num == fieldRetry {
				m.Retry = x
			} else {
				m.Retried = x
			}
		case fieldTimeout:
			m.Timeout = int64(v)
		case fieldDeadline:
			m.Deadline = int64(v)
		case fieldLastFailedAt:
			m.LastFailedAt = int64(v)
		case fieldRetention:
			m.Retention = int64(v)
		case fieldCompletedAt:
			m.CompletedAt = int64(v)
		}
	}
	return m, nil
}

// decodeHeader decodes one entry of the headers map (key 1, value 2).
func decodeHeader(b []byte) (k, v string, err error) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 || typ != protowire.BytesType {
			return "", "", fmt.Errorf("%w: bad headers entry", errMessage)
		}
		b = b[n:]
		raw, n := protowire.ConsumeBytes(b)
		if n < 0 {
			return "", "", fmt.Errorf("%w: bad headers entry", errMessage)
		}
		b = b[n:]
		switch num {
		case 1:
			k = string(raw)
		case 2:
			v = string(raw)
		}
	}
	return k, v, nil
}

// field is one field of an encoded message, its tag included.
type field struct {
	num protowire.Number
	raw []byte
}

// splitFields splits an encoded message into its fields, in order.
func splitFields(b []byte) ([]field, error) {
	var out []field
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, fmt.Errorf("%w: %v", errMessage, protowire.ParseError(n))
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return nil, fmt.Errorf("%w: field %d: %v", errMessage, num, protowire.ParseError(m))
		}
		out = append(out, field{num, b[:n+m]})
		b = b[n+m:]
	}
	return out, nil
}

// failed returns the encoded message b as asynq's broker rewrites it when
// a task fails (rdb.Retry with isFailure, rdb.Archive): retried set when
// retried >= 0, error_msg and last_failed_at set, every other field kept
// byte for byte. Fields come out in field number order, as Go's protobuf
// marshals them, and a zero value is left out, as proto3 does.
func failed(b []byte, retried int64, errMsg string, failedAt int64) ([]byte, error) {
	fields, err := splitFields(b)
	if err != nil {
		return nil, err
	}
	set := func(num protowire.Number, raw []byte) {
		fields = slices.DeleteFunc(fields, func(f field) bool { return f.num == num })
		if raw != nil {
			fields = append(fields, field{num, raw})
		}
	}
	varint := func(num protowire.Number, v uint64) []byte {
		if v == 0 {
			return nil
		}
		return protowire.AppendVarint(protowire.AppendTag(nil, num, protowire.VarintType), v)
	}
	if retried >= 0 {
		set(fieldRetried, varint(fieldRetried, uint64(int64(int32(retried)))))
	}
	var msgRaw []byte
	if errMsg != "" {
		msgRaw = protowire.AppendString(protowire.AppendTag(nil, fieldErrorMsg, protowire.BytesType), errMsg)
	}
	set(fieldErrorMsg, msgRaw)
	set(fieldLastFailedAt, varint(fieldLastFailedAt, uint64(failedAt)))
	slices.SortStableFunc(fields, func(a, b field) int { return int(a.num) - int(b.num) })
	var out []byte
	for _, f := range fields {
		out = append(out, f.raw...)
	}
	return out, nil
}
