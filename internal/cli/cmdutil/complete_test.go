package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
)

// PagedLister pages until the cursor is 0, drops repeats, and stops at
// 1000 names; a failure returns it.
func TestPagedLister(t *testing.T) {
	pages := [][]string{{"a", "b"}, {}, {"b", "c"}}
	calls := 0
	var pager Pager = func(ctx context.Context, cursor uint64, match string, count int64) ([]string, uint64, error) {
		if int(cursor) != calls || match != "" || count != 1000 {
			return nil, 0, fmt.Errorf("call %d: cursor %d, match %q, count %d", calls, cursor, match, count)
		}
		calls++
		if calls == len(pages) {
			return pages[cursor], 0, nil
		}
		return pages[cursor], cursor + 1, nil
	}
	list := PagedLister(func(*Factory) (Pager, error) { return pager, nil })
	got, err := list(context.Background(), nil, nil)
	if err != nil || !slices.Equal(got, []string{"a", "b", "c"}) || calls != 3 {
		t.Errorf("got %q, %v after %d calls", got, err, calls)
	}

	many := func(ctx context.Context, cursor uint64, match string, count int64) ([]string, uint64, error) {
		var out []string
		for i := range 700 {
			out = append(out, fmt.Sprint(cursor, "-", i))
		}
		return out, cursor + 1, nil // never ends
	}
	got, err = PagedLister(func(*Factory) (Pager, error) { return many, nil })(context.Background(), nil, nil)
	if err != nil || len(got) != 1000 {
		t.Errorf("an endless listing: %d names, %v", len(got), err)
	}

	boom := errors.New("boom")
	failing := func(ctx context.Context, cursor uint64, match string, count int64) ([]string, uint64, error) {
		return nil, 0, boom
	}
	if _, err := PagedLister(func(*Factory) (Pager, error) { return failing, nil })(context.Background(), nil, nil); !errors.Is(err, boom) {
		t.Errorf("a failing listing: %v", err)
	}
}
