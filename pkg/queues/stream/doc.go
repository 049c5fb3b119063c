// Package stream is chatq's queue kind for Redis Streams consumer groups
// (pkg/queues): each (stream, group) pair is a queue, addressed
// "stream:KEY/GROUP". KEY is the stream's key without chatq's --prefix;
// the group is what follows the last '/', with '%' and '/' in it written
// %25 and %2F (Name, ParseName), so every pair has one address and every
// address one pair.
//
// # States
//
// Entries after the group's last-delivered-id are ready (XINFO GROUPS'
// lag); the group's pending entries list (PEL) is inflight, each with its
// consumer, idle time and delivery count (Job.Attempts); dead is the
// group's dead-letter stream, which chatq keeps since Redis has none
// (DeadLetter). A group has no delayed, retry or done state: those counts
// are nil. Get of an entry the group has read and acknowledged returns
// State done with KindState "acked", since such an entry is in the stream
// still (for other groups, until trimmed) but has left this queue; no
// count or scan of done is offered, since the stream cannot tell which of
// its entries each group acknowledged other than by walking them.
//
// Without a lag (Redis 6.2, whose XINFO GROUPS has none, or Redis 7 after
// a deletion past the last-delivered-id) ready is 0 when no entry is past
// it, XLEN when every entry is, the count of the entries past it when at
// most 100 are, and nil (unknown) otherwise.
//
// # Keys
//
// Under prefix p, the queue KEY/GROUP reads and writes:
//
//	p KEY               STREAM  the application's stream; chatq reads it,
//	                            acknowledges and claims in GROUP, deletes
//	                            entries (Remove), adds redriven ones
//	p KEY:dead:GROUP    STREAM  the default dead-letter stream (chatq's):
//	                            each entry is the markers _origin_stream
//	                            (the stream's key), _origin_group,
//	                            _origin_id, _origin_consumer (who held it
//	                            last), _deliveries, _dead_at (server time,
//	                            Unix ms), in that order, then the entry's
//	                            own fields; their place tells them from an
//	                            entry's own field of the same name
//
// Discover reads every stream under the prefix (SCAN TYPE stream).
//
// # Round trips and atomicity
//
// Every script is one call on the stream's slot, does bounded work (at
// most 100 entries, and XINFO GROUPS: as many rows as the stream has
// groups) and re-checks each entry before it writes; the
// scripts that write check the user's ACL permissions first (Redis 7),
// so that a refusal changes nothing.
//
//	Discover    one SCAN (TYPE stream, COUNT n) of one master, then XINFO
//	            GROUPS of each stream found, one pipeline
//	Counts      counts.lua (XINFO GROUPS, TIME, XRANGE of the first ready
//	            entry; XREVRANGE, XRANGE, XLEN without a lag) and XLEN of
//	            the dead-letter stream, one pipeline
//	Scan        ready: XINFO GROUPS, then XRANGE pages; inflight:
//	            pending.lua per page (XPENDING, XRANGE of each entry); dead:
//	            XRANGE pages of the dead-letter stream. Pages of at most 100
//	Get         get.lua (XRANGE, XPENDING of the id, XINFO GROUPS) and
//	            XRANGE of the dead-letter stream, one pipeline
//	Recover     claim.lua per 100: XAUTOCLAIM … JUSTID, or XCLAIM … JUSTID
//	            of ids
//	Remove      remove.lua per 100 (XACK, XDEL); XDEL of ids found only in
//	            the dead-letter stream, one pipeline
//	DeadLetter  XPENDING pages of 100, deadletter.lua per page (XADD to the
//	            dead-letter stream, XACK; never XDEL)
//	Redrive     redrive.lua per 100 (XADD to the stream, XDEL from the
//	            dead-letter stream)
//
// DeadLetter and Redrive write two streams in one script: on a Cluster
// both must be in one slot (a hash tag in the stream's key puts
// KEY:dead:GROUP in its slot), and chatq refuses them otherwise rather
// than move an entry in two steps that a failure between could duplicate
// or lose.
//
// # Versions
//
// Reads work on Redis 6.2 and later (exclusive ranges, XPENDING's
// extended form). Writes were tested on Redis 7.0.15: on a server whose
// scripts have no redis.REDIS_VERSION_NUM (before 7.0) every write
// returns an error matching ErrReadOnly and changes nothing, and Counts
// says so in ReadOnly.
package stream
