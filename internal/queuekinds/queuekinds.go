// Package queuekinds is where a queue kind is registered: the one list of
// the kinds that chatq's commands, top, metrics, check, completion and acl
// reach (pkg/queues). Adding a kind is its package plus one line here.
package queuekinds

import (
	"github.com/chatq-dev/chatq/pkg/delayq"
	"github.com/chatq-dev/chatq/pkg/queues"
	"github.com/chatq-dev/chatq/pkg/queues/asynq"
	"github.com/chatq-dev/chatq/pkg/queues/bullmq"
	"github.com/chatq-dev/chatq/pkg/queues/celery"
	"github.com/chatq-dev/chatq/pkg/queues/rq"
	"github.com/chatq-dev/chatq/pkg/queues/rsmq"
	"github.com/chatq-dev/chatq/pkg/queues/sidekiq"
	"github.com/chatq-dev/chatq/pkg/queues/stream"
)

// Names are the kinds' names, in the order listings show them; an address
// KIND:NAME with another KIND is no queue chatq knows.
var Names = []string{"rsmq", "bullmq", "asynq", "stream", "celery", "sidekiq", "rq"}

// New returns the registry of every kind on q's server: RSMQ's through q
// (its namespace), then the other libraries' layouts under env.Prefix.
func New(q *delayq.Client, env queues.Env) *queues.Registry {
	return queues.NewRegistry(
		rsmq.New(q),
		bullmq.New(env),
		asynq.New(env),
		stream.New(env),
		celery.New(env),
		sidekiq.New(env),
		rq.New(env),
	)
}
