// Package delayq is a delayed message queue with visibility timeouts,
// stored in the layout of RSMQ (the rsmq npm package, 0.12.4), so that Go
// programs, chatq and Node services using rsmq share queues. A pushed
// message becomes due at once, after a delay or at a time; a receive hides
// it for the visibility timeout and it comes back unless acked
// (at-least-once); a dead-letter policy moves a message received too often
// to another queue.
//
//	q := delayq.New(rdb, delayq.Options{}) // rdb: a go-redis client
//	err := q.Create(ctx, "jobs", delayq.Attributes{VT: time.Minute})
//	p, err := q.Push(ctx, "jobs", "resize photo 42", delayq.PushOptions{Delay: 10 * time.Second})
//	msgs, err := q.Receive(ctx, "jobs", delayq.ReceiveOptions{N: 10, Wait: 30 * time.Second})
//	for _, m := range msgs {
//		// handle m.Body, then
//		_, err = q.Ack(ctx, "jobs", m.Receipt)
//	}
//
// Work does that loop for you, renewing each running handler's lease.
// Every method takes the context first, then the queue's name; a single
// result is a pointer to a struct (*Pushed, *Stats), several are a slice
// ([]Message).
//
// # Options
//
// As in go-redis, the zero value of an option means its documented
// default: a ReceiveOptions.VT of 0 is the queue's vt, a PushOptions.Delay
// of 0 the queue's delay, an Attributes field of 0 given to Create the
// default and given to SetAttributes "unchanged". Where 0 itself must be
// asked for, give -1, as go-redis's -1 means "none" (Options.ReadTimeout,
// MaxRetries): VT -1 is a visibility timeout of 0 (visible again at
// once), Delay -1 no delay, MaxSize -1 no limit, and MaxReceives -1 given
// to SetAttributes removes the dead-letter policy. Other negative values
// are refused.
//
// # Names and errors
//
// Queue names follow RSMQ's rule: 1 to 160 characters from [A-Za-z0-9_-]
// (CheckName), and no queue may be named QUEUES: its ZSET would be the
// registry. A bad name, a value out of range (vt and delay: up to 9999999
// seconds; maxsize: 1024 to 65536 UTF-16 code units, as RSMQ counts) and a
// message over maxsize (ErrMessageTooLong) are errors matching ErrInvalid,
// returned before any Redis call. ErrInvalid is the same value as
// chat.ErrInvalid and shardlist.ErrInvalid.
//
// A message id is 32 characters: the Redis server time in microseconds in
// base 36 (10 characters) followed by 22 random characters from
// [A-Za-z0-9].
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
//	                    (chatq's dead-letter policy, ignored by rsmq) and
//	                    totaldead (chatq's count of messages moved to the
//	                    dead-letter queue, Stats.TotalDead); per message
//	                    <id> (body), <id>:rc (receive count) and <id>:fr
//	                    (first receive, Unix ms), and in a dead-letter
//	                    queue <id>:dl (chatq's record of the move: the
//	                    queue it came from, its rc, when); rsync and rscan
//	                    (chatq's: whether ns:q:R is complete)
//	p ns:q:R      ZSET  chatq's index of received messages, id -> visible-at
//	                    (the score in ns:q), for O(log n) stats; rsmq
//	                    neither reads nor writes it
//	p ns:q:T:<minute>  HASH  token -> the answer of a call with a token
//	                    (PushOptions.Token, ReceiveOptions.Token,
//	                    AckOptions.Token) made in that minute of the
//	                    client's clock (Unix ms / 60000); a repeat reads
//	                    this minute's hash and the 10 before it (a first
//	                    try, FirstTry, none), and the first write sets
//	                    its hash to live 11 minutes: at most
//	                    11 such keys per queue; rsmq neither reads nor
//	                    writes them
//
// Realtime notifications go to channel "p ns:rt:q" (RSMQ's realtime
// channel): every push publishes the queue's message count there, and
// Receive with Wait subscribes to it. With HashTag (Redis Cluster) the
// queue part is wrapped in a hash tag, "p ns:{q}", "p ns:{q}:Q" and
// "p ns:{q}:R", which rsmq cannot read (it does not run on Cluster
// anyway). Access lists, per operation, the Redis commands it sends and
// these key and channel patterns (chatq acl builds an ACL user from it).
//
// # Time
//
// Every time is read from the Redis server (TIME inside the scripts), never
// from the client's clock. A message is due when its visible-at time is at
// or before the server's current millisecond, and is never received before.
// The one use of the client's clock is naming the minute of the records of
// calls with a token (ns:q:T:<minute>), which a repeat from the same
// client finds whatever the server's time.
//
// # Round trips and atomicity
//
// Each operation on messages is one Lua script on the queue's keys (one
// cluster slot), so it is atomic and takes one round trip, and does
// bounded work whatever the queue holds. Every script opens with the
// checks of queue.lua, the prelude they share: key types, stored values
// and, on Redis 7, permissions, all before its first write.
//
//	Push       push.lua     id, score, body, totalsent, PUBLISH
//	PushMany   pushmany.lua up to 100 messages (1 MiB) per call, atomically
//	                        and in order: every body and due time checked
//	                        first, then one ZADD, one HSET, totalsent and
//	                        one PUBLISH for them all; more than one call is
//	                        preceded by Stats (maxsize and the server's
//	                        clock checked for all), and a stop part way is
//	                        a *PushError saying what is stored
//	Receive    receive.lua  claim up to 100 due messages per call (hide for
//	                        the vt, or delete with Pop); dead-letter moves
//	Ack        ack.lua      delete up to 100 messages per call
//	ChangeVisibility
//	           retry.lua    set when a message becomes visible (RSMQ's
//	                        changeMessageVisibility): a retry or a lease
//	                        renewal; with a receipt, only while it names
//	                        the latest delivery
//	Retry      retry.lua    the same for up to 100 messages per call
//	Stats      stats.lua    attributes and ready/delayed/in-flight counts,
//	                        the oldest ready message, O(log n), read only
//	                        (and one HEXISTS of the dead-letter queue)
//	StatsEach  stats.lua    Stats of many queues, 20 per pipeline
//	Peek       peek.lua     read up to 50 messages per call without
//	                        receiving them; filtered (state, age, a
//	                        substring matched in the script, receive
//	                        count, time in flight), examining up to 1,000
//	                        entries and about 1 MiB of bodies per call
//	Get        get.lua      one message by id with its state, O(log n),
//	                        read only
//	Redrive    redrive.lua  move up to 100 messages of a dead-letter queue
//	                        back per call (examining up to 500),
//	                        atomically: ids and bodies kept, receive counts
//	                        reset, due now. Two queues: not on Cluster.
//	Export     export.lua   one page of a backup: HSCAN of 250 hash fields
//	                        with each message's score, rc and fr; read only
//	                        (every message present for the whole walk
//	                        passed at least once); Peek's filters, the
//	                        substring matched in the script
//	Import     import.lua   up to 100 messages (1 MiB) per call, atomically,
//	                        under their own ids, due times, rc and fr; ids
//	                        already there are skipped (same body) or
//	                        conflicts (another body). Read from an
//	                        iterator one batch at a time, each message
//	                        checked as read (maxsize from one Stats before
//	                        the first call); a stop part way is a
//	                        *PushError saying which messages are done
//	Purge      purge.lua    delete every message, keep the attributes: O(1)
//	                        (UNLINK, attributes written back), refusing
//	                        more messages than allowed in the same call
//	Delete     delete.lua   UNLINK the queue's keys, O(1), as Purge refuses
//	Reindex    reindex_*.lua rebuild ns:q:R after rsmq received: ZSCANs
//	                        of 100 for about 1 ms of server time per call
//
// Queues is one SSCAN of ns:QUEUES; DeadLetterSources pages it (100 names
// a call) with one pipeline of HGETs per page.
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
// once with a fresh receive count (ReceiveOptions.Moved is told).
//
// Each received message carries a receipt naming that delivery,
// "<id>.<rc>.<fr>" (see Message.Receipt): Ack, Retry and ChangeVisibility
// given a receipt change the message only while no later receive has taken
// it (else ErrStaleReceipt), given a bare id they act as RSMQ's. Peek, Get
// and Export give a received message's latest receipt, so that what a peek
// selected (PeekOptions.InFlightFor, MinReceives) can be retried by receipt
// without touching a message received again since. Work renews the lease
// of each running handler and acks by receipt. It receives a batch for
// its free slots in one call (one receive.lua call per 100), and while
// handlers are quick keeps a few more in hand, leased; acks finished
// handlers in one call; about one round trip per message at Concurrency
// 2, fewer above, against two before.
//
// # Searching
//
// PeekOptions.Grep is matched inside peek.lua and export.lua (string.find,
// plain: no pattern syntax), so only matches cross the network;
// PeekOptions.Regexp is matched in Go, over pages of at most 250 candidates
// and about 1 MiB of bodies (Redis's Lua has no regular expressions, and
// Lua patterns are not them). Either way each call is bounded, and
// PeekOptions.Progress reports how many messages were examined.
//
// # Cancellation
//
// Every read has a deadline, and a cancelled context ends every wait at
// once: a claim in flight is abandoned (its messages released should its
// reply still come), the SUBSCRIBE confirmation is read aside with the
// client's read timeout.
//
// Package delayqtest fills queues for tests and benchmarks.
package delayq
