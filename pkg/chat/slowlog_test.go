package chat_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chatq-dev/chatq/internal/base/keyspace"
	"github.com/chatq-dev/chatq/pkg/chat"
	"github.com/redis/go-redis/v9"
)

// slowlog logs every command of a real server in SLOWLOG while a benchmark
// runs, and restores the server's settings after it.
type slowlog struct {
	c *redis.Client
}

func startSlowlog(tb testing.TB, c *redis.Client) slowlog {
	ctx := context.Background()
	old := must(c.ConfigGet(ctx, "slowlog-*").Result())(tb)
	tb.Cleanup(func() {
		for k, v := range old {
			c.ConfigSet(ctx, k, v)
		}
	})
	must(c.ConfigSet(ctx, "slowlog-log-slower-than", "0").Result())(tb)
	must(c.ConfigSet(ctx, "slowlog-max-len", "100000").Result())(tb)
	return slowlog{c}
}

func (l slowlog) reset(tb testing.TB) {
	must(l.c.SlowLogReset(context.Background()).Result())(tb)
}

// take returns the server time in µs of the commands logged since reset,
// leaving out SLOWLOG itself, in total and per command name (a script call
// counts as its EVALSHA, which includes the commands it runs; those are
// listed apart, marked "(in scripts)", and not added to the total).
func (l slowlog) take(tb testing.TB) (int64, map[string]int64) {
	logs := must(l.c.Do(context.Background(), "SLOWLOG", "GET", "-1").Slice())(tb)
	per := map[string]int64{}
	var total int64
	for _, e := range logs {
		f, _ := e.([]any)
		if len(f) < 5 {
			continue
		}
		us, _ := f[2].(int64)
		args, _ := f[3].([]any)
		name := ""
		if len(args) > 0 {
			name, _ = args[0].(string)
			name = strings.ToLower(name)
		}
		if name == "slowlog" {
			continue
		}
		if addr, _ := f[4].(string); len(f) > 4 && (addr == "?:0" || addr == "") {
			// Run by a script (Redis 7 logs those too): its time is in
			// the script call's already.
			per["(in scripts) "+name] += us
			continue
		}
		if name == "evalsha" && len(args) > 2 {
			// Scripts told apart by their number of keys.
			n, _ := args[2].(string)
			name += "/" + n + "keys"
		}
		total += us
		per[name] += us
	}
	return total, per
}

// BenchmarkPendingServerTime measures one marking Pending of a user in K
// chats of which N have one new message each, on the real server
// CHATQ_TEST_REDIS_URL: wall time per call (ns/op) and the server time of
// every command the call sends, reads and marking, from SLOWLOG
// (server-µs/op; and per command name with -v). The sends that make the
// news run outside the timer and the log.
//
//	CHATQ_TEST_REDIS_URL=redis://127.0.0.1:6379/0 \
//	  go test -run '^$' -bench PendingServerTime -benchtime 200x ./pkg/chat
func BenchmarkPendingServerTime(b *testing.B) {
	url := os.Getenv("CHATQ_TEST_REDIS_URL")
	if url == "" {
		b.Skip("set CHATQ_TEST_REDIS_URL to run")
	}
	for _, tc := range []struct{ k, news int }{{1, 1}, {100, 100}, {1000, 10}} {
		b.Run(fmt.Sprintf("K=%d/news=%d", tc.k, tc.news), func(b *testing.B) {
			c := redis.NewClient(must(redis.ParseURL(url))(b))
			defer c.Close()
			ctx := context.Background()
			prefix := keyspace.UniquePrefix("chatq-pending-servertime")
			defer keyspace.DeletePrefix(ctx, c, prefix)
			s := chat.New(c, chat.Options{Prefix: prefix})
			chats := make([]string, tc.k)
			for i := range chats {
				id := strconv.Itoa(i + 1)
				chats[i] = id
				must(s.Create(ctx, chat.CreateRequest{From: "bob", To: []string{"sam"}, ID: id, Message: ptr("hi")}))(b)
			}
			must(s.Pending(ctx, "sam", chat.PendingOptions{}))(b)
			// Spread the chats with news over the user's chats.
			var withNews []string
			for i := range tc.news {
				withNews = append(withNews, chats[i*tc.k/tc.news])
			}
			log := startSlowlog(b, c)
			var total int64
			per := map[string]int64{}
			b.ResetTimer()
			for range b.N {
				b.StopTimer()
				for _, id := range withNews {
					must(s.Send(ctx, id, "bob", "news"))(b)
				}
				log.reset(b)
				b.StartTimer()
				got, err := s.Pending(ctx, "sam", chat.PendingOptions{})
				b.StopTimer()
				if err != nil || len(got) != tc.news {
					b.Fatalf("pending: %d chats, %v; want %d", len(got), err, tc.news)
				}
				us, by := log.take(b)
				total += us
				for k, v := range by {
					per[k] += v
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(total)/float64(b.N), "server-µs/op")
			names := make([]string, 0, len(per))
			for k := range per {
				names = append(names, k)
			}
			slices.Sort(names)
			var sb strings.Builder
			for _, k := range names {
				fmt.Fprintf(&sb, " %s %.1f", k, float64(per[k])/float64(b.N))
			}
			b.Logf("server µs per call by command:%s", sb.String())
		})
	}
}
