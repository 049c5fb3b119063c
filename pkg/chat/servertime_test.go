package chat_test

import (
	"context"
	_ "embed"
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

// fetchV1 is fetch.lua before pending marked after delivery: it read and
// marked (and moved seen:{USER}) in one call, for every chat of the user.
//
//go:embed testdata/fetch_v1.lua
var fetchV1Src string

// sendWithNews is send.lua plus what a per-user news index would cost:
// one ZADD news:{MEMBER} per member (keys the script does not declare:
// possible on a standalone server only).
const sendWithNews = `
local id = redis.call('INCR', KEYS[3])
local t = redis.call('TIME')
redis.call('ZADD', KEYS[2], id, '{"id":' .. id .. ',"ts":' .. t[1] .. ARGV[2])
local members = redis.call('ZRANGE', KEYS[1], 0, -1)
for i = 1, #members do
  redis.call('ZADD', ARGV[5] .. 'news:{' .. members[i] .. '}', 'NX', id, ARGV[4])
end
redis.call('PUBLISH', ARGV[3], ARGV[4])
return id`

// serverCPU is the real server's main-thread CPU time so far, in µs.
func serverCPU(t *testing.T, c *redis.Client) float64 {
	info := must(c.Info(context.Background(), "cpu").Result())(t)
	var total float64
	for _, l := range strings.Split(info, "\r\n") {
		k, v, _ := strings.Cut(l, ":")
		if k == "used_cpu_user_main_thread" || k == "used_cpu_sys_main_thread" {
			f, _ := strconv.ParseFloat(v, 64)
			total += f * 1e6
		}
	}
	return total
}

// TestPendingServerTime measures the server CPU time of one marking
// Pending (issue 17): a user in K chats of which some have news, today's
// code (prefilter, read, mark after delivery) against the code before it
// (one read-and-mark script for every chat) and against no prefilter; and
// what a per-user news index would add to each send. Runs interleave
// (A B C A B C ...), each the median of 5 (CHATQ_TEST_SERVER_TIME_ROUNDS)
// with the range; CHATQ_TEST_SERVER_TIME_K=1 runs one case. Real server
// only, on demand:
//
//	CHATQ_TEST_REDIS_URL=redis://127.0.0.1:6379/0 CHATQ_TEST_SERVER_TIME=1 \
//	  go test -run TestPendingServerTime -v ./pkg/chat
func TestPendingServerTime(t *testing.T) {
	url := os.Getenv("CHATQ_TEST_REDIS_URL")
	if url == "" || os.Getenv("CHATQ_TEST_SERVER_TIME") == "" {
		t.Skip("set CHATQ_TEST_REDIS_URL and CHATQ_TEST_SERVER_TIME=1 to run")
	}
	opt := must(redis.ParseURL(url))(t)
	c := redis.NewClient(opt)
	defer c.Close()
	ctx := context.Background()
	v1 := redis.NewScript(fetchV1Src)
	news := redis.NewScript(sendWithNews)

	var report strings.Builder
	report.WriteString("| case | variant | server µs per call, median of 5 | range |\n| --- | --- | --- | --- |\n")
	cases := []struct{ k, news, iters int }{{1, 1, 1000}, {100, 10, 300}, {100, 100, 30}, {1000, 10, 150}}
	if k := os.Getenv("CHATQ_TEST_SERVER_TIME_K"); k != "" {
		// One case only: CHATQ_TEST_SERVER_TIME_K=1 measures a user in 1 chat.
		cases = slices.DeleteFunc(cases, func(c struct{ k, news, iters int }) bool { return strconv.Itoa(c.k) != k })
	}
	rounds := 5
	if r, err := strconv.Atoi(os.Getenv("CHATQ_TEST_SERVER_TIME_ROUNDS")); err == nil && r >= 3 {
		rounds = r
	}
	for _, tc := range cases {
		prefix := keyspace.UniquePrefix("chatq-servertime")
		defer keyspace.DeletePrefix(ctx, c, prefix)
		s := chat.New(c, chat.Options{Prefix: prefix})
		chats := make([]string, tc.k)
		for i := range chats {
			chats[i] = strconv.Itoa(i + 1)
			must(s.Create(ctx, chat.CreateRequest{From: "bob", To: []string{"sam"}, ID: chats[i], Message: ptr("hi")}))(t)
		}
		must(s.Pending(ctx, "sam", chat.PendingOptions{}))(t)
		withNews := chats[:tc.news]
		send := func() {
			for _, id := range withNews {
				must(s.Send(ctx, id, "bob", "news"))(t)
			}
		}
		variants := []struct {
			name string
			run  func()
		}{
			{"today: prefilter, read, mark after delivery", func() {
				got := must(s.Pending(ctx, "sam", chat.PendingOptions{}))(t)
				if len(got) != tc.news {
					t.Fatalf("%d chats with news, want %d", len(got), tc.news)
				}
			}},
			{"no prefilter (read every chat), mark after delivery", func() {
				old := chat.SetPrefilterMin(1 << 30)
				defer chat.SetPrefilterMin(old)
				if got := must(s.Pending(ctx, "sam", chat.PendingOptions{}))(t); len(got) != tc.news {
					t.Fatalf("%d chats with news", len(got))
				}
			}},
			{"before: read-and-mark script for every chat", func() {
				ids := must(c.ZRange(ctx, prefix+"seen:{sam}", 0, -1).Result())(t)
				_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
					for _, id := range ids {
						v1.EvalSha(ctx, p, []string{prefix + "chat:{" + id + "}", prefix + "msgs:{" + id + "}",
							prefix + "ids:{" + id + "}", prefix + "seen:{sam}"}, "sam", "mark", "0", id)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}},
		}
		v1.Load(ctx, c)
		// The sends of each iteration are measured alone and taken off.
		results := make([][]float64, len(variants)+1)
		for range rounds {
			for vi := 0; vi <= len(variants); vi++ {
				before := serverCPU(t, c)
				for range tc.iters {
					send()
					if vi < len(variants) {
						variants[vi].run()
					}
				}
				results[vi] = append(results[vi], (serverCPU(t, c)-before)/float64(tc.iters))
			}
		}
		base := results[len(variants)]
		slices.Sort(base)
		for vi, v := range variants {
			r := results[vi]
			for i := range r {
				r[i] -= base[len(base)/2]
			}
			slices.Sort(r)
			fmt.Fprintf(&report, "| K=%d, %d with news | %s | %.0f | %.0f–%.0f |\n", tc.k, tc.news, v.name, r[len(r)/2], r[0], r[len(r)-1])
		}
	}

	// What a news index adds to every send, by chat size.
	for _, members := range []int{2, 10, 100} {
		if os.Getenv("CHATQ_TEST_SERVER_TIME_K") != "" {
			break
		}
		prefix := keyspace.UniquePrefix("chatq-servertime")
		defer keyspace.DeletePrefix(ctx, c, prefix)
		s := chat.New(c, chat.Options{Prefix: prefix})
		var to []string
		for i := range members - 1 {
			to = append(to, "u"+strconv.Itoa(i))
		}
		must(s.Create(ctx, chat.CreateRequest{From: "bob", To: to, ID: "c"}))(t)
		tail := `,"sender":"bob","message":"news"}`
		keys := []string{prefix + "chat:{c}", prefix + "msgs:{c}", prefix + "ids:{c}"}
		news.Load(ctx, c)
		var plain, indexed []float64
		const iters = 1000
		for range 5 {
			before := serverCPU(t, c)
			for range iters {
				must(s.Send(ctx, "c", "bob", "news"))(t)
			}
			plain = append(plain, (serverCPU(t, c)-before)/iters)
			before = serverCPU(t, c)
			for range iters {
				must(news.EvalSha(ctx, c, keys, "bob", tail, chat.Channel(s), "c", prefix).Result())(t)
			}
			indexed = append(indexed, (serverCPU(t, c)-before)/iters)
		}
		slices.Sort(plain)
		slices.Sort(indexed)
		fmt.Fprintf(&report, "| send, %d members | send.lua | %.0f | %.0f–%.0f |\n", members, plain[2], plain[0], plain[4])
		fmt.Fprintf(&report, "| send, %d members | + a ZADD news:{MEMBER} per member | %.0f | %.0f–%.0f |\n", members, indexed[2], indexed[0], indexed[4])
	}
	t.Log("\n" + report.String())
}
