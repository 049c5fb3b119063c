package cmdutil

import (
	"slices"
	"testing"

	"github.com/chatq-dev/chatq/internal/conn"
	"github.com/chatq-dev/chatq/internal/redistest"
)

func TestScanNames(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		ctx := t.Context()
		for _, k := range []string{"chat:{1}", "chat:{22}", "msgs:{1}", "{jobs}:first", "chat:{x}:other"} {
			if err := b.Client.Set(ctx, b.Prefix+k, "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		f := &Factory{cfg: &conn.Config{Prefix: b.Prefix}, client: b.Client}
		got, err := scanNames(ctx, f, "chat:{*}")
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if want := []string{"1", "22"}; !slices.Equal(got, want) {
			t.Errorf("chat ids: got %q, want %q", got, want)
		}
		got, err = scanNames(ctx, f, "{*}:*")
		if err != nil || !slices.Equal(got, []string{"jobs"}) {
			t.Errorf("list keys: got %q, %v", got, err)
		}
	})
}
