// Command chatq operates group chat inboxes, delayed queues and sharded lists
// stored in Redis. See README.md.
package main

import (
	"os"

	"github.com/chatq-dev/chatq/cmd"
)

func main() {
	os.Exit(cmd.Main())
}
