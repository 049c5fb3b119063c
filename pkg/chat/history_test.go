package chat_test

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/chatq-dev/chatq/pkg/chat"
)

// History's filters match the text as sent (JSON escapes and all), page by
// page, and report how many messages they examined.
func TestHistorySearch(t *testing.T) {
	modes(t, func(t *testing.T, b redistest.Backend, s *chat.Client) {
		ctx := context.Background()
		s = chat.New(b.Client, chat.Options{Prefix: b.Prefix, ChunkSize: 3})
		must(s.Create(ctx, chat.CreateRequest{From: "joe", To: []string{"jeff"}, ID: "c"}))(t)
		texts := []string{"order 4711 shipped", `say "4711"`, "line one\nline 4711", "n", "nothing", "ORDER 4711", "日本 4711", "o"}
		for _, m := range texts {
			must(s.Send(ctx, "c", "joe", m))(t)
		}
		ids := func(opt chat.HistoryOptions) ([]int64, int, int) {
			t.Helper()
			examined, calls := 0, 0
			opt.Progress = func(n, kept int) { examined = n; calls++ }
			h := must(s.History(ctx, "c", opt))(t)
			var out []int64
			for _, m := range h {
				out = append(out, m.ID)
			}
			return out, examined, calls
		}
		for _, tc := range []struct {
			name string
			opt  chat.HistoryOptions
			want []int64
		}{
			{"all", chat.HistoryOptions{}, []int64{1, 2, 3, 4, 5, 6, 7, 8}},
			{"substring", chat.HistoryOptions{Grep: "4711"}, []int64{1, 2, 3, 6, 7}},
			{"a quote, as sent", chat.HistoryOptions{Grep: `"4711"`}, []int64{2}},
			{"a newline, as sent", chat.HistoryOptions{Grep: "one\nline"}, []int64{3}},
			{"not an escape's letter", chat.HistoryOptions{Grep: "n"}, []int64{3, 4, 5}},
			{"case matters", chat.HistoryOptions{Grep: "order"}, []int64{1}},
			{"a regular expression", chat.HistoryOptions{Regexp: regexp.MustCompile(`(?i)^order \d+`)}, []int64{1, 6}},
			{"both", chat.HistoryOptions{Grep: "4711", Regexp: regexp.MustCompile(`^\p{Han}`)}, []int64{7}},
			{"none", chat.HistoryOptions{Grep: "4712"}, nil},
		} {
			got, examined, calls := ids(tc.opt)
			if !slices.Equal(got, tc.want) || examined != len(texts) || calls != 3 {
				t.Errorf("%s: %v, examined %d in %d calls; want %v, %d in 3", tc.name, got, examined, calls, tc.want, len(texts))
			}
		}
		if h, err := s.History(ctx, "c", chat.HistoryOptions{Grep: "4712"}); err != nil || h == nil {
			t.Fatalf("no match: %#v %v, want an empty slice", h, err)
		}
	})
}
