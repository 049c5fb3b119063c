package shardlist

import "github.com/redis/go-redis/v9"

// ASKHook is the hook declineASK puts on a Cluster's node clients.
func ASKHook() redis.Hook { return askHook{} }
