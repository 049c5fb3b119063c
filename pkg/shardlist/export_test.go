package shardlist

import (
	"time"

	"github.com/redis/go-redis/v9"
)

// ASKHook is the hook declineASK puts on a Cluster's node clients.
func ASKHook() redis.Hook { return askHook{} }

// SetClock sets the client's clock, which names the minute of the records
// of its calls with a token (time.Now when nil), for tests.
func SetClock(c *Client, now func() time.Time) { c.now = now }
