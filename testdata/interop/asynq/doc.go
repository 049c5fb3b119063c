// Package interop proves chatq's asynq kind (pkg/queues/asynq) against
// asynq itself: asynq's own Client and Server fill every state, chatq's
// counts and listings are compared with asynq's Inspector, and after each
// chatq action the Inspector agrees and asynq's Server processes what
// chatq ran again. It is a module of its own so that chatq does not
// depend on asynq; .ci/run runs it.
package interop
