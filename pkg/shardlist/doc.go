// Package shardlist is the sharded LIST of "Redis in Action" §11.4: one
// logical list stored as a run of bounded Redis LISTs (shards), with pushes,
// pops, blocking pops, length and range done by Lua scripts, so that a list
// of millions of items never makes one big key.
//
// A Client works on any number of lists; its methods are named and shaped
// as go-redis's list commands, with the list's KEY after ctx:
//
//	lists := shardlist.New(rdb, shardlist.Options{Prefix: "app:"})
//	n, err := lists.RPush(ctx, "jobs", "a", "b", "c") // the new length, 3
//	items, err := lists.LPop(ctx, "jobs", 2)          // [a b]
//	item, err := lists.BLPop(ctx, "jobs", 5*time.Second)
//	if errors.Is(err, shardlist.ErrEmpty) {
//		// nothing came within 5 s
//	}
//
// Lists pages through the lists' KEYs (SCAN style), Info and Layout say how
// a list is stored, and Access what each method needs of an ACL user.
//
// # Keys
//
// A list KEY owns, behind Options.Prefix:
//
//	<prefix>{KEY}:first  STRING  number of the left end shard (absent = 0)
//	<prefix>{KEY}:last   STRING  number of the right end shard (absent = 0)
//	<prefix>{KEY}:mid    STRING  items in the shards strictly between first
//	                             and last (absent = 0)
//	<prefix>{KEY}:size   STRING  the shard size recorded by the first push
//	<prefix>{KEY}:ver    STRING  write counter, incremented by every push and
//	                             every pop that changes the list
//	<prefix>{KEY}:<n>    LIST    shard n, for first <= n <= last
//	<prefix>{KEY}:T:<minute>  HASH  token -> the answer of a Pop or Push
//	                             with a token made in that minute of the
//	                             client's clock (Unix ms / 60000); a
//	                             repeat reads this minute's hash and the
//	                             10 before it (a first try, FirstTry,
//	                             none), and the first write sets its
//	                             hash to live 11 minutes: at most 11 such keys
//	                             per list (not list keys: Lists and
//	                             Delete pass them by)
//
// All of them share the hash tag {KEY}, so every script touches one Redis
// Cluster slot; scripts declare the five non-shard keys and build shard
// names from KEYS[1]. A shard holds at most ShardSize-1 items (the book's
// LIST_CHUNK_SIZE rule). LPUSH opens shards toward negative numbers, RPUSH
// toward positive ones. Emptied lists keep their endpoint keys (as in the
// book); the mid key is deleted whenever its count drops to 0.
//
// # Redis Cluster and resharding
//
// Because shard keys are not declared, a list's scripts must never run on
// a node that is importing the list's slot (where shards still on the old
// node look empty). So when rdb is a *redis.ClusterClient, the package adds
// a hook to its node clients (the master serving the list's slot, checked
// before each call, and every node the client creates; once each) that
// answers a node's ASK to one of the list's scripts as a TRYAGAIN refusal
// instead of following it: nothing ran, and the call is sent again, by
// go-redis and by the caller, until the slot has moved (MOVED). Every other
// command is left as it is. While a list's slot moves, its calls therefore
// fail with TRYAGAIN (after go-redis's own retries); retrying them is safe.
//
// # Names
//
// A list KEY must be non-empty, valid UTF-8, with no whitespace or control
// characters and no '{' or '}' (it is the hash tag). Every method checks it
// before it sends anything: a bad one is an error matching ErrInvalid (the
// same value as chat.ErrInvalid and delayq.ErrInvalid).
//
// # Corrupt state and bounded calls
//
// Every script first reads and checks the five non-shard keys, in O(1) and
// before any write or loop: a value that is not an integer, a wrong type,
// first after last, or endpoints farther apart than the items could fill
// (each shard between the ends holds at least one item, so mid >= last -
// first - 1) is refused with an error matching ErrCorrupt that names the
// key. A shard between the ends that is empty or not a LIST is refused when
// a script reaches it. Scripts that write check everything that can fail
// before their first write, so a refused call changes nothing. No call
// opens, empties or walks more than 100 shards, pops more than 1000 items
// or returns more than 1000 items of a range: longer operations take
// several calls, and reads of several calls (LRange, Layout) start over when
// the write counter changes between them, so they return one state.
//
// # The mid count
//
// Invariant, after every script: mid = the sum of LLEN over the shards n
// with first < n < last. Only the push and pop scripts change a shard that
// is (or becomes) part of the list, and only at an end:
//
//   - push fills the end shard, then moves the endpoint outward; each shard
//     it leaves is now strictly inside (unless it is the other end) and its
//     length, known to the script, is added;
//   - pop takes from the end shard; when the endpoint steps inward onto a
//     shard strictly before the other end, that shard's LLEN is subtracted
//     (it is an end shard now, read live);
//   - the wake script only writes shards outside first..last, and the wait
//     of a blocking pop changes nothing (see below).
//
// So the length is LLEN(first) + LLEN(last) (when they differ) + mid: push
// (which returns the new length) and LLen cost O(1) in the number of items.
// Middle shards are never empty (a shard is left behind with at least one
// item), so the mid key is absent only when no shard lies between the
// endpoints; a list written before the mid count existed has middle shards
// and no key, and the scripts then count them (push and pop store the
// count). Layout and LRange still read every shard's LLEN.
//
// # Round trips and atomicity
//
//   - LPush, RPush: one script call (EVALSHA) per batch of Options.BatchSize items
//     (more if a batch would open over 100 shards); each call is atomic, a
//     push of several is not, and a failure after the first returns a
//     *PushError saying how many items are stored.
//   - LPop, RPop: one atomic script call per 1000 items (or 100 shards emptied).
//   - LLen, Info: one script call, O(1) in the length.
//   - LRange, Layout: one call per 1000 items or 100 shards, one state.
//   - Lists: one SCAN per call.
//   - BLPop/BRPop: one pop script call; when the list is empty, one pipeline
//     of [wake script, wait on the end shard] per wait slice of at most one
//     second, on a connection of its own, then one pop script call again.
//     When ctx ends, CLIENT UNBLOCK ends the wait at once.
//
// # Blocking pops
//
// As in the book, a blocking pop waits on the end shard. Just before it, a
// script checks whether the endpoint has moved so that the shard is no
// longer part of the list; if so it pushes WakeMarker into that shard, the
// wait returns at once and the caller looks again (its next pop removes the
// marker). WakeMarker is one fixed value: every pop filters it and no push
// accepts it. Unlike the book's BLPOP, the wait is BLMOVE of the shard onto
// itself (LEFT LEFT or RIGHT RIGHT): it blocks the same way but puts the
// element back in the same atomic step, so it takes nothing. The item is
// then popped by the pop script, which returns what a plain list's
// BLPOP/BRPOP would. BLMOVE needs Redis >= 6.2.
//
// The book reads shard sizes with CONFIG from Lua; Redis >= 5 forbids that,
// so the size is an argument here.
package shardlist
