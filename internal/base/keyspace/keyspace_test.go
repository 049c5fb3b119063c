package keyspace_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/internal/testkit/redistest"
	"github.com/redis/go-redis/v9"
)

// scanAll pages through ScanPage with a small count and returns what it
// found, sorted and without repeats.
func scanAll(t *testing.T, c redis.UniversalClient, match string) []string {
	t.Helper()
	var out []string
	for cursor, calls := uint64(0), 0; ; calls++ {
		if calls > 10000 {
			t.Fatal("the listing does not end")
		}
		keys, next, err := keyspace.ScanPage(context.Background(), c, cursor, match, 5)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, keys...)
		if cursor = next; cursor == 0 {
			slices.Sort(out)
			return slices.Compact(out)
		}
	}
}

func fillKeys(t *testing.T, c redis.UniversalClient, prefix string, n int) []string {
	t.Helper()
	var want []string
	for i := range n {
		k := fmt.Sprintf("%s{k%d}:x", prefix, i)
		if err := c.Set(context.Background(), k, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		want = append(want, k)
	}
	slices.Sort(want)
	return want
}

// ScanPage finds every key matching, on one server.
func TestScanPage(t *testing.T) {
	redistest.Run(t, func(t *testing.T, b redistest.Backend) {
		want := fillKeys(t, b.Client, b.Prefix+"scan:", 40)
		if got := scanAll(t, b.Client, keyspace.Pattern(b.Prefix+"scan:")); !slices.Equal(got, want) {
			t.Errorf("found %d keys, want %d", len(got), len(want))
		}
	})
}

// ScanPage finds every key matching on every master of a cluster
// (CHATQ_TEST_CLUSTER_URL), one master after the other.
func TestScanPageCluster(t *testing.T) {
	url := os.Getenv("CHATQ_TEST_CLUSTER_URL")
	if url == "" {
		t.Skip("CHATQ_TEST_CLUSTER_URL not set: no Redis Cluster to test against")
	}
	opt, err := redis.ParseClusterURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClusterClient(opt)
	defer c.Close()
	prefix := keyspace.UniquePrefix("keyspacetest")
	t.Cleanup(func() { keyspace.DeletePrefix(context.Background(), c, prefix) })
	want := fillKeys(t, c, prefix, 60)
	if got := scanAll(t, c, keyspace.Pattern(prefix)); !slices.Equal(got, want) {
		t.Errorf("found %d keys, want %d", len(got), len(want))
	}
}

// ScanTypePage finds only the keys of the type asked for, page by page.
func TestScanTypePage(t *testing.T) {
	c := redistest.StartServer(t).Client()
	ctx := context.Background()
	var want []string
	for i := range 30 {
		k := fmt.Sprintf("t:{k%d}", i)
		var err error
		if i%3 == 0 {
			err = c.XAdd(ctx, &redis.XAddArgs{Stream: k, Values: []string{"f", "v"}}).Err()
			want = append(want, k)
		} else {
			err = c.Set(ctx, k, "v", 0).Err()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	var got []string
	for cursor, calls := uint64(0), 0; ; calls++ {
		if calls > 1000 {
			t.Fatal("the listing does not end")
		}
		keys, next, err := keyspace.ScanTypePage(ctx, c, cursor, "t:*", 4, "stream")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, keys...)
		if cursor = next; cursor == 0 {
			break
		}
	}
	slices.Sort(got)
	if got = slices.Compact(got); !slices.Equal(got, want) {
		t.Errorf("found %v, want the %d streams %v", got, len(want), want)
	}
}
