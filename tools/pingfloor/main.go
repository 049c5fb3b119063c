// Command pingfloor is the floor of chatq's start-up: the smallest Go
// program that does what `chatq ping` does over the network (a go-redis
// client: HELLO, then PING, and the reply printed), so that a one-shot
// command's cost can be split into what any Go client of go-redis pays and
// what chatq adds (docs/performance.md, "Start-up"). With -signals it also
// catches Ctrl-C and SIGTERM as chatq's Main does (os/signal starts three
// threads of its own); scripts/startup-floor.sh builds a third variant
// that links every dependency chatq links.
//
//	CGO_ENABLED=0 go build -o /tmp/pingfloor ./tools/pingfloor
//	/tmp/pingfloor [-signals] redis://127.0.0.1:6379/0
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

func main() {
	args := os.Args[1:]
	ctx := context.Background()
	if len(args) > 0 && args[0] == "-signals" {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
		defer stop()
		args = args[1:]
	}
	url := "redis://127.0.0.1:6379/0"
	if len(args) > 0 {
		url = args[0]
	}
	opt, err := redis.ParseURL(url)
	if err != nil {
		fmt.Fprintln(os.Stderr, "pingfloor:", err)
		os.Exit(2)
	}
	c := redis.NewClient(opt)
	defer c.Close()
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	pong, err := c.Ping(ctx).Result()
	if err != nil {
		fmt.Fprintln(os.Stderr, "pingfloor:", err)
		os.Exit(1)
	}
	fmt.Println(pong)
}
