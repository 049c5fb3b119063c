package jsonfilter

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func noEnv() []string { return nil }

func apply(t *testing.T, f *Filter, data string, tty bool) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := f.Apply(&out, []byte(data), tty)
	return out.String(), err
}

func TestJQ(t *testing.T) {
	const msgs = `[{"id":"a1","message":"hi\tthere","sent":1795266822123,"rc":1,"big":12345678901234567890,"ts":1795266822.123},{"id":"b2","message":"<&>","sent":1795266822999,"rc":2,"big":1,"ts":1.5}]`
	for _, tt := range []struct {
		expr, in string
		tty      bool
		want     string
	}{
		// strings print raw, one per line
		{".[].id", msgs, false, "a1\nb2\n"},
		{".[0].message", msgs, false, "hi\tthere\n"},
		// numbers as written: no 1.795266822123e+12, no rounding of big ones
		{".[0].sent, .[0].big, .[0].ts", msgs, false, "1795266822123\n12345678901234567890\n1795266822.123\n"},
		// other values as JSON: compact piped, indented on a terminal, HTML as is
		{".[1] | {id, message}", msgs, false, `{"id":"b2","message":"<&>"}` + "\n"},
		{".[1] | {id}", msgs, true, "{\n  \"id\": \"b2\"\n}\n"},
		{"map(.rc) | add", msgs, false, "3\n"},
		{"length == 2", msgs, false, "true\n"},
		{".[5]", msgs, false, "null\n"},
		{"empty", msgs, false, ""},
	} {
		f, err := JQ(tt.expr, noEnv)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		got, err := apply(t, f, tt.in, tt.tty)
		if err != nil || got != tt.want {
			t.Errorf("--jq %s (tty %v): %q, %v; want %q", tt.expr, tt.tty, got, err, tt.want)
		}
	}
}

// A bad expression fails when it is compiled, with where it went wrong.
func TestJQInvalid(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{".[", `invalid --jq expression: unexpected EOF at offset 2: ".[ <-- "`},
		{".a | nosuch", "invalid --jq expression: function not defined: nosuch/0"},
		{"", "invalid --jq expression"},
	} {
		_, err := JQ(tt.expr, noEnv)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("--jq %q: %v, want %q", tt.expr, err, tt.want)
		}
	}
}

// A valid expression that does not fit the value is a RuntimeError; what
// it printed before stays printed.
func TestJQRuntimeError(t *testing.T) {
	f, err := JQ(".[] | .id", noEnv)
	if err != nil {
		t.Fatal(err)
	}
	got, err := apply(t, f, `[{"id":"a"},3]`, false)
	var re *RuntimeError
	if !errors.As(err, &re) || got != "a\n" || !strings.HasPrefix(err.Error(), "--jq: expected an object but got: number") {
		t.Errorf("got %q, %v", got, err)
	}
	if _, err := apply(t, f, `{"id":`, false); !errors.As(err, &re) {
		t.Errorf("output that is not JSON: %v", err)
	}
}

// jq's $ENV shows the environment without chatq's passwords.
func TestJQEnvHidesPasswords(t *testing.T) {
	env := func() []string {
		return []string{"HOME=/home/joe", "CHATQ_PASSWORD=s3cret", "REDISCLI_AUTH=s3cret", "CHATQ_SENTINEL_PASSWORD=s3cret"}
	}
	f, err := JQ("$ENV, env", env)
	if err != nil {
		t.Fatal(err)
	}
	got, err := apply(t, f, `null`, false)
	if err != nil || strings.Contains(got, "s3cret") || strings.Count(got, "/home/joe") != 2 {
		t.Errorf("got %q, %v", got, err)
	}
}

func TestTemplate(t *testing.T) {
	const msgs = `[{"id":"a1","message":"hi","sent":1795266822123,"rc":1,"ts":1795266822.5},{"id":"b2","message":"a\tb","sent":1795266822999,"rc":12,"ts":1795266823}]`
	for _, tt := range []struct {
		tmpl string
		tty  bool
		want string
	}{
		{`{{range .}}{{.id}} {{.sent}} {{.ts}}{{"\n"}}{{end}}`, false, "a1 1795266822123 1795266822.5\nb2 1795266822999 1795266823\n"},
		{`{{range .}}{{if gt .rc 1}}{{.id}}{{end}}{{end}}`, false, "b2"},
		{`{{join "," (pluck "id" .)}}`, false, "a1,b2"},
		{`{{range .}}{{timefmt "2006-01-02T15:04:05.000Z07:00" .sent}} {{timefmt "15:04:05.0" .ts}};{{end}}`, false, ""},
		{`{{range .}}{{tablerow .id .message .rc}}{{end}}`, false, "a1\thi\t1\nb2\ta\\tb\t12\n"},
		{`{{range .}}{{tablerow .id .rc}}{{end}}`, true, "a1  1\nb2  12\n"},
		{`{{range .}}{{tablerow .id}}{{end}}{{tablerender}}end`, false, "a1\nb2\nend"},
		{`{{truncate 4 "abcdefgh"}} {{truncate 8 "abcdefgh"}}`, false, "a... abcdefgh"},
	} {
		f, err := Template(tt.tmpl)
		if err != nil {
			t.Fatalf("%s: %v", tt.tmpl, err)
		}
		got, err := apply(t, f, msgs, tt.tty)
		want := tt.want
		if strings.Contains(tt.tmpl, "timefmt") {
			want = time.UnixMilli(1795266822123).Format("2006-01-02T15:04:05.000Z07:00") + " " + time.UnixMilli(1795266822500).Format("15:04:05.0") + ";" +
				time.UnixMilli(1795266822999).Format("2006-01-02T15:04:05.000Z07:00") + " " + time.Unix(1795266823, 0).Format("15:04:05.0") + ";"
		}
		if err != nil || got != want {
			t.Errorf("--template %s (tty %v): %q, %v; want %q", tt.tmpl, tt.tty, got, err, want)
		}
	}
	if _, err := Template(`{{.id`); err == nil || !strings.HasPrefix(err.Error(), "invalid --template: ") {
		t.Errorf("a bad template: %v", err)
	}
	f, _ := Template(`{{timefmt "15:04" .id}}`)
	if _, err := apply(t, f, `{"id":true}`, false); !errors.As(err, new(*RuntimeError)) {
		t.Errorf("timefmt of a bool: %v", err)
	}
}

func TestTimeago(t *testing.T) {
	now := time.Unix(1795266822, 0)
	for _, tt := range []struct {
		v    any
		want string
	}{
		{int64(1795266822000 - 3*60*1000), "3 minutes ago"},
		{int64(1795266822 - 3600), "1 hour ago"},
		{int64(1795266822 + 2*86400), "in 2 days"},
		{int64(1795266822 - 10), "less than a minute ago"},
		{"2017-06-01T10:00:00Z", "9 years ago"},
	} {
		if got, err := timeago(tt.v, now); err != nil || got != tt.want {
			t.Errorf("timeago %v: %q, %v; want %q", tt.v, got, err, tt.want)
		}
	}
}

func TestDecodeOneAndLines(t *testing.T) {
	for _, tt := range []struct {
		in      string
		one     bool // DecodeOne accepts it
		lines   int  // DecodeLines' count, -1 when refused
		comment string
	}{
		{`{"a":1}` + "\n", true, 1, "one value"},
		{"  [1,2]  \n\n", true, -1, "whitespace around one value; a blank line is not JSON Lines"},
		{"", false, 0, "nothing"},
		{"a\tb\n[1]\n", false, -1, "a table row before the JSON"},
		{"{\"a\":1}\n{\"a\":2}\n", false, 2, "two values: JSON Lines, not one value"},
		{"{\"a\":1}{\"a\":2}\n", false, -1, "two values on one line"},
		{"{\"a\":1}\n{\"a\":", false, -1, "a cut line"},
		{"{\"a\":1}", true, -1, "no newline after the last line"},
	} {
		_, err := DecodeOne([]byte(tt.in))
		if (err == nil) != tt.one {
			t.Errorf("DecodeOne %s: %v", tt.comment, err)
		}
		vs, err := DecodeLines([]byte(tt.in))
		if tt.lines < 0 && err == nil || tt.lines >= 0 && (err != nil || len(vs) != tt.lines) {
			t.Errorf("DecodeLines %s: %d values, %v", tt.comment, len(vs), err)
		}
	}
}
