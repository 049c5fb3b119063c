package stream

import (
	"fmt"
	"strings"

	"github.com/chatq-dev/chatq/internal/base/names"
	"github.com/redis/go-redis/v9"
)

// slot is the Redis Cluster hash slot of key: CRC16 (XMODEM) of its hash
// tag (what is between the first '{' and the first '}' after it, when
// not empty), else of the whole key, modulo 16384.
func slot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	var crc uint16
	for k := 0; k < len(key); k++ {
		crc ^= uint16(key[k]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % 16384
}

// sameSlot refuses, on a Cluster, a move between the stream and a
// dead-letter stream in another slot: chatq moves an entry in one atomic
// script or not at all, and a script's keys must share a slot. On one
// server every key does.
func (q *Queue) sameSlot(rdb redis.UniversalClient, dead string) error {
	if _, ok := rdb.(*redis.ClusterClient); !ok {
		return nil
	}
	if a, b := slot(q.key), slot(dead); a != b {
		return fmt.Errorf("%w: on a Cluster the dead-letter stream must be in the stream's slot: %q is in slot %d, %q in %d; "+
			"chatq moves an entry in one atomic script or not at all (give the stream a hash tag, as {orders}, "+
			"and its dead-letter stream the same tag)", names.ErrInvalid, dead, b, q.key, a)
	}
	return nil
}
