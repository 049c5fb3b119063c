// Package asynq is chatq's queue kind for asynq (github.com/hibiken/asynq),
// the Go task queue: it reads asynq's queues on Redis and does asynq's own
// operations on them (run a task now, delete it, run the archive again,
// pause and resume, take back tasks whose lease expired), writing the
// keys as asynq's Inspector and recoverer write them. It does not import
// asynq: docs/kinds/asynq.md says why, with what the dependency was
// measured to cost.
//
// A queue's address is "asynq:NAME", NAME its asynq name. Keys (chatq's
// --prefix in front of each; asynq uses none):
//
//	asynq:queues                 set of queue names (Discover: SSCAN)
//	asynq:{NAME}:pending         list of ids; asynq takes from the tail
//	asynq:{NAME}:active          list of ids being processed
//	asynq:{NAME}:lease           zset id -> lease expiry (Unix s)
//	asynq:{NAME}:scheduled       zset id -> when due
//	asynq:{NAME}:retry           zset id -> when due
//	asynq:{NAME}:archived        zset id -> when archived
//	asynq:{NAME}:completed       zset id -> when the kept task expires
//	asynq:{NAME}:paused          string, present while paused
//	asynq:{NAME}:groups          set of group names; asynq:{NAME}:g:<group> zsets
//	asynq:{NAME}:t:<id>          hash: msg (a protobuf TaskMessage), state,
//	                             pending_since (ns), result, group, unique_key
//	asynq:{NAME}:processed[:<day>], asynq:{NAME}:failed[:<day>]  counters
//
// Every key of a queue is in the slot of its hash tag {NAME}. States map
// onto chatq's: pending -> ready, scheduled -> delayed, active ->
// inflight, retry -> retry, archived -> dead, completed -> done;
// aggregating (tasks waiting in a group) is counted in Counts.Other.
//
// Round trips and atomicity: Counts is one pipeline (SISMEMBER
// asynq:queues and one read script, so one instant); Scan one pipeline
// per page of 100; Get one. Retry, Remove and Redrive check the queue
// (one pipeline: SISMEMBER, and EXISTS of a layout chatq does not know),
// then run one script per 100 tasks (Remove reads the server's TIME
// first); Recover per 100 tasks reads TIME, runs one read script and one
// write script; Pause is three round trips, Resume two. Each write script
// reads and checks every task's state before it writes that task, and
// checks key types and the user's ACL before its first write, so a task
// whose state changed is left and reported, and a refusal writes nothing.
// A task in a list is moved only within 1000 entries of either end of it
// (LPOS with MAXLEN, then LREM with a count), and one script compares at
// most 20000 list entries in all, so no call walks a long list.
package asynq
