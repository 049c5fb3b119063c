package exporter

import (
	"time"

	"github.com/chatq-dev/chatq/internal/cli/exposition"
	"github.com/chatq-dev/chatq/internal/cli/snapshot"
)

// The metrics, in the order they are written. docs/metrics.md lists them
// with their cost; a test checks that it names each.
const (
	mUp             = "chatq_up"
	mServerInfo     = "chatq_server_info"
	mScrapeDuration = "chatq_scrape_duration_seconds"
	mScrapeCalls    = "chatq_scrape_server_calls"
	mScrapeTrips    = "chatq_scrape_round_trips"
	mCapped         = "chatq_scrape_capped"
	mDiscovered     = "chatq_discovered_names"
	mComplete       = "chatq_discovery_complete"
	mExamined       = "chatq_examined_names"
	mReadErrors     = "chatq_read_errors"
	mRefused        = "chatq_discovery_refused"
	mQueueMessages  = "chatq_queue_messages"
	mOldestReady    = "chatq_queue_oldest_ready_age_seconds"
	mSent           = "chatq_queue_messages_sent_total"
	mReceived       = "chatq_queue_messages_received_total"
	mDeadLettered   = "chatq_queue_messages_dead_lettered_total"
	mDeadLetter     = "chatq_queue_dead_letter_messages"
	mPaused         = "chatq_queue_paused"
	mListItems      = "chatq_list_items"
	mListShards     = "chatq_list_shards"
	mChatMessages   = "chatq_chat_stored_messages"
)

func gauge(name, help string) exposition.Family {
	return exposition.Family{Name: name, Type: exposition.Gauge, Help: help}
}

func counter(name, help string) exposition.Family {
	return exposition.Family{Name: name, Type: exposition.Counter, Help: help}
}

// sample is a sample with labels given as name, value pairs.
func sample(v float64, labels ...string) exposition.Sample {
	s := exposition.Sample{Value: v}
	for i := 0; i+1 < len(labels); i += 2 {
		s.Labels = append(s.Labels, exposition.Label{Name: labels[i], Value: labels[i+1]})
	}
	return s
}

func bool01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// downFamilies are a scrape's metrics when the server could not be read.
func downFamilies(took time.Duration) []exposition.Family {
	up := gauge(mUp, "1 when this scrape read the server, 0 when it could not (the server is down, unreachable, or refused chatq).")
	up.Samples = []exposition.Sample{sample(0)}
	d := gauge(mScrapeDuration, "How long this scrape took.")
	d.Samples = []exposition.Sample{sample(took.Seconds())}
	return []exposition.Family{up, d}
}

// Families are the metrics of snapshot s, taken in took under limits lim.
func Families(s *snapshot.Snapshot, took time.Duration, lim snapshot.Limits) []exposition.Family {
	fams := downFamilies(took)
	fams[0].Samples[0].Value = 1
	info := gauge(mServerInfo, "The server chatq reads, as INFO says: version, mode (redis_mode) and role; always 1.")
	info.Samples = []exposition.Sample{sample(1, "version", s.Server.Version, "mode", s.Server.Mode, "role", s.Server.Role)}
	calls := gauge(mScrapeCalls, "Commands and script calls this scrape sent to the server.")
	calls.Samples = []exposition.Sample{sample(float64(s.Calls))}
	trips := gauge(mScrapeTrips, "Round trips to the server this scrape took (a pipeline counts once).")
	trips.Samples = []exposition.Sample{sample(float64(s.RoundTrips))}

	capped := gauge(mCapped, "1 when more names were known than this scrape read (--max-queues, --max-lists, --max-chats).")
	discovered := gauge(mDiscovered, "Names found by discovery so far that the filters keep: queues in the registry, sharded lists and chats in the keyspace.")
	complete := gauge(mComplete, "1 once discovery has walked the whole registry or keyspace at least once (big ones take several scrapes).")
	examined := gauge(mExamined, "Names whose numbers this scrape read (chats: read so far, a share each scrape in turn).")
	readErrors := gauge(mReadErrors, "Names whose numbers could not be read this scrape (deleted meanwhile, a key of the wrong type).")
	refused := gauge(mRefused, "1 when the server refused discovery to this user (no SCAN in its ACL): no sharded lists or chats are read.")
	kind := func(k string, known, read, errs int, done bool) {
		capped.Samples = append(capped.Samples, sample(bool01(known > read+errs), "kind", k))
		discovered.Samples = append(discovered.Samples, sample(float64(known), "kind", k))
		complete.Samples = append(complete.Samples, sample(bool01(done), "kind", k))
		examined.Samples = append(examined.Samples, sample(float64(read), "kind", k))
		readErrors.Samples = append(readErrors.Samples, sample(float64(errs), "kind", k))
	}

	messages := gauge(mQueueMessages, "Messages (jobs, tasks, entries) of a queue by state: ready (could be taken now), delayed (due later), inflight (taken, not finished), and where the queue's kind has them retry, dead and done (docs/kinds.md maps each kind's states).")
	paused := gauge(mPaused, "1 when the queue is paused (its workers take no new jobs), for the kinds that can pause.")
	oldest := gauge(mOldestReady, "How long the ready message that has waited longest has been due; 0 when none is ready.")
	sent := counter(mSent, "Messages pushed to a queue (RSMQ's totalsent; dead-letter moves and redrives into it count).")
	received := counter(mReceived, "Receives from a queue, redeliveries included (RSMQ's totalrecv).")
	dead := counter(mDeadLettered, "Messages a queue moved to its dead-letter queue, received too often (chatq's totaldead).")
	dlq := gauge(mDeadLetter, "Messages in a queue's dead-letter queue (the dead_letter label).")
	qErrs := 0
	for _, r := range s.Queues {
		if r.Error != "" {
			qErrs++
			continue
		}
		q, k := r.Name, r.Kind
		messages.Samples = append(messages.Samples,
			sample(float64(r.Ready), "kind", k, "queue", q, "state", "ready"),
			sample(float64(r.Delayed), "kind", k, "queue", q, "state", "delayed"),
			sample(float64(r.InFlight), "kind", k, "queue", q, "state", "inflight"))
		for _, st := range []struct {
			name string
			n    *int64
		}{{"retry", r.Retry}, {"dead", r.Dead}, {"done", r.Done}} {
			if st.n != nil {
				messages.Samples = append(messages.Samples, sample(float64(*st.n), "kind", k, "queue", q, "state", st.name))
			}
		}
		if r.Paused != nil {
			paused.Samples = append(paused.Samples, sample(bool01(*r.Paused), "kind", k, "queue", q))
		}
		oldest.Samples = append(oldest.Samples, sample(float64(r.OldestMs())/1000, "kind", k, "queue", q))
		if k != "rsmq" {
			continue // the counters below are RSMQ's
		}
		sent.Samples = append(sent.Samples, sample(float64(r.TotalSent), "queue", q))
		received.Samples = append(received.Samples, sample(float64(r.TotalRecv), "queue", q))
		dead.Samples = append(dead.Samples, sample(float64(r.TotalDead), "queue", q))
		if r.DeadLetterDepth != nil {
			dlq.Samples = append(dlq.Samples, sample(float64(*r.DeadLetterDepth), "queue", q, "dead_letter", r.DeadLetter))
		}
	}
	kind("queue", s.QueuesKnown, len(s.Queues)-qErrs, qErrs, s.QueuesComplete)

	items := gauge(mListItems, "Items in a sharded list.")
	shards := gauge(mListShards, "Shards (Redis LISTs) a sharded list spans.")
	if lim.Lists > 0 {
		lErrs := 0
		for _, r := range s.Lists {
			if r.Error != "" {
				lErrs++
				continue
			}
			items.Samples = append(items.Samples, sample(float64(r.Length), "list", r.Key))
			shards.Samples = append(shards.Samples, sample(float64(r.Shards), "list", r.Key))
		}
		kind("list", s.ListsKnown, len(s.Lists)-lErrs, lErrs, s.ListsComplete)
		refused.Samples = append(refused.Samples, sample(bool01(s.ListsRefused != ""), "kind", "list"))
	}
	chats := gauge(mChatMessages, "Messages stored in the chats read so far (a chat keeps a message until every member has seen it).")
	if lim.Chats > 0 {
		chats.Samples = []exposition.Sample{sample(float64(s.Chats.Messages))}
		kind("chat", s.Chats.Count, s.Chats.Examined, 0, s.ChatsComplete)
		refused.Samples = append(refused.Samples, sample(bool01(s.ChatsRefused != ""), "kind", "chat"))
	}
	return append(fams, info, calls, trips, capped, discovered, complete, examined, readErrors, refused,
		messages, paused, oldest, sent, received, dead, dlq, items, shards, chats)
}
