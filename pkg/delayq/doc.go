// Package delayq is a delayed message queue with visibility timeouts, stored
// in the layout of RSMQ (the rsmq npm package, 0.12.4), so that Go programs,
// chatq and Node services using rsmq share queues.
//
// # Keys
//
// With namespace ns (default "rsmq") and the caller's prefix p, queue q owns:
//
//	p ns:QUEUES   SET   names of all queues (shared by the namespace)
//	p ns:q        ZSET  message id -> visible-at time, Unix ms
//	p ns:q:Q      HASH  attributes vt, delay (seconds), maxsize (UTF-16
//	                    units, -1 unlimited), totalrecv, totalsent, created,
//	                    modified (Unix seconds); maxreceives and deadletter
//	                    (chatq's dead-letter policy, ignored by rsmq); per
//	                    message <id> (body), <id>:rc (receive count) and
//	                    <id>:fr (first receive, Unix ms); rsync and rscan
//	                    (chatq's: whether ns:q:R is complete)
//	p ns:q:R      ZSET  chatq's index of received messages, id -> visible-at
//	                    (the score in ns:q), for O(log n) stats; rsmq
//	                    neither reads nor writes it
//
// # Names
//
// Queue names follow RSMQ's rule: 1 to 160 characters from [A-Za-z0-9_-]
// (CheckName), and no queue may be named QUEUES: its ZSET would be the
// registry. A bad name is an error matching ErrInvalid, returned before any
// Redis call; so are values out of range (ErrInvalidValue) and a message
// over maxsize (ErrMessageTooLong). ErrInvalid is the same value as
// chat.ErrInvalid and shardlist.ErrInvalid.
//
// # Notifications and hash tags
//
// Realtime notifications go to channel "p ns:rt:q" (RSMQ's realtime
// channel): every push publishes the queue's message count there, and
// Receive with Wait subscribes to it. With HashTag (Redis Cluster) the
// queue part is wrapped in a hash tag, "p ns:{q}", "p ns:{q}:Q" and
// "p ns:{q}:R", which
// rsmq cannot read (it does not run on Cluster anyway).
//
// A message id is 32 characters: the Redis server time in microseconds in
// base 36 (10 characters) followed by 22 random characters from [A-Za-z0-9].
//
// # Time
//
// Every time is read from the Redis server (TIME inside the scripts), never
// from the client's clock. A message is due when its visible-at time is at
// or before the server's current millisecond, and is never received before.
//
// # Round trips and atomicity
//
// Each operation on messages is one Lua script on the queue's keys (one
// cluster slot), so it is atomic and takes one round trip, and does
// bounded work whatever the queue holds (checking key types, stored values
// and, on Redis 7, permissions before its first write):
//
//	Push      push.lua     id, score, body, totalsent, PUBLISH
//	Receive   receive.lua  claim up to N due messages (hide for the vt, or
//	                       delete with Pop); dead-letter moves
//	Ack       ack.lua      delete any number of messages
//	Retry     retry.lua    set when a message becomes visible (RSMQ's
//	                       changeMessageVisibility); also ChangeVisibility
//	                       and Extend (a lease renewal). With a receipt,
//	                       only while it names the latest delivery.
//	Stats     stats.lua    attributes and ready/delayed/in-flight counts,
//	                       the oldest ready message, O(log n), read only
//	                       (and one HEXISTS of the dead-letter queue)
//	StatsEach stats.lua    Stats of many queues, 20 per pipeline
//	Peek      peek.lua     read up to 50 messages without receiving them
//	                       (more: one call per 50); PeekWith filters by
//	                       state and age, examining up to 1,000 per call
//	Get       get.lua      one message by id with its state, O(log n),
//	                       read only
//	Redrive   redrive.lua  move up to 100 messages of a dead-letter queue
//	                       back (examining up to 500), atomically: ids and
//	                       bodies kept, receive counts reset, due now. Two
//	                       queues: not on Cluster. DeadLetterSources (which queue
//	                       dead-letters into it) pages ns:QUEUES by SSCAN
//	                       with one pipeline of HGETs per page.
//	Export    export.lua   one page of a backup: HSCAN of 250 hash fields
//	                       with each message's score, rc and fr; read only
//	                       (one call per page; every message present for
//	                       the whole walk at least once)
//	Import    import.lua   up to 100 messages under their own ids, due
//	                       times, rc and fr; ids already there are skipped
//	                       (same body) or conflicts (another body)
//	Purge     purge.lua    delete every message, keep the attributes: O(1)
//	                       (UNLINK, attributes written back); PurgeAtMost
//	                       refuses more than N messages in the same call
//	Delete    delete.lua   UNLINK the queue's keys, O(1); DeleteAtMost as
//	                       PurgeAtMost
//	Reindex   reindex_*.lua  rebuild ns:q:R after rsmq received: ZSCANs
//	                       of 100 for about 1 ms of server time per call
//
// Attributes is one HMGET. List reads ns:QUEUES with SSCAN;
// DeadLetterSources too, with one pipeline of HGETs per 100 names.
//
// Receive with a dead-letter policy takes a second round trip the first
// time a message must move and the client does not know the dead-letter
// queue yet (the script names only declared keys); the client remembers it.
// Create and Delete also update ns:QUEUES (another cluster slot), in a
// second command after the script, which first checks that the registry
// is a set and (Redis 7) that the user may change it. Receive with
// Wait takes one round trip when something is due; otherwise it subscribes
// to the realtime channel and claims again before sleeping, so no push is
// missed.
//
// # Delivery
//
// Receive hides each message for the visibility timeout and increments its
// receive count; unless acked it becomes due again (at-least-once). With
// Pop it is deleted as it is received (at-most-once). With a dead-letter
// policy (MaxReceives N, DeadLetter Q2) a message that has been received N
// times is not delivered an N+1th time: the receive that would exceed the
// limit moves it, atomically and under the same id, to Q2, visible there at
// once with a fresh receive count.
//
// Each received message carries a receipt naming that delivery,
// "<id>.<rc>.<fr>" (see Message.Receipt): Ack, Retry, ChangeVisibility and
// Extend given a receipt change the message only while no later receive
// has taken it (else ErrStaleReceipt), given a bare id they act as RSMQ's.
// Work renews the lease of each running handler and acks by receipt.
//
// # Cancellation
//
// Every read has a deadline, and a cancelled context ends every wait at
// once: a claim in flight is abandoned (its messages released should its
// reply still come), the SUBSCRIBE confirmation is read aside with the
// client's read timeout.
package delayq
