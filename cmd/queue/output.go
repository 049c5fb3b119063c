package queue

import (
	"fmt"
	"time"

	"github.com/chatq-dev/chatq/internal/cli/iostreams"
)

// ms renders a time as Unix milliseconds for JSON, or nil for the zero time.
func ms(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// stamp renders a time for text output: RFC 3339 with milliseconds in UTC,
// or "-".
func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z07:00")
}

// roughly renders a wait for people: "1m30s" up to two days, then whole
// days ("115 days"), never "2764h0m0s".
func roughly(d time.Duration) string {
	switch {
	case d < time.Minute:
		return d.Round(time.Millisecond).String()
	case d < 48*time.Hour:
		return d.Round(time.Second).String()
	}
	return fmt.Sprintf("%.0f days", d.Hours()/24)
}

// infoTTY prints success chatter, only when stderr is a terminal and the
// output is text.
func infoTTY(ios *iostreams.IOStreams, json bool, format string, a ...any) {
	if ios.ErrTTY && !json {
		ios.Infof(format, a...)
	}
}

// plural returns "1 message" or "2 messages".
func plural(n int64, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
