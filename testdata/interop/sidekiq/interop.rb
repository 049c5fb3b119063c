# interop.rb: Sidekiq's own client and API, for chatq's interop test
# (pkg/queues/sidekiq/interop_test.go). Usage: ruby interop.rb COMMAND
# REDIS_URL [ARGS]; each command prints one JSON line.
#   fail Q...        push a FailJob and a DeadJob to each queue (for the worker)
#   hold Q RELEASE   push a HoldJob to Q (runs until RELEASE exists)
#   fill Q...        ready jobs, scheduled jobs (perform_in an hour) and a
#                    job killed into the dead set (DeadSet#kill), per queue
#   counts Q...      per queue: Queue#size and the sets' and WorkSet's
#                    entries of the queue; and Sidekiq::Stats
#   state JID...     where each job is, by the API, and its retry_count
#   retry JID        SortedEntry#retry of the job in the retry or dead set
require_relative "worker"

cmd, url, *rest = ARGV
Sidekiq.configure_client { |c| c.redis = {url: url} }
Sidekiq.logger.level = Logger::WARN

def out(v)
  puts JSON.generate(v)
end

def set_entries(set, q)
  set.select { |e| e.queue == q }
end

def work_of(q)
  Sidekiq::Workers.new.select { |_pid, _tid, w| w["queue"] == q }
end

case cmd
when "fail"
  jids = rest.map { |q|
    [q, {"fail" => FailJob.set(queue: q).perform_async("fail", q),
         "dead" => DeadJob.set(queue: q).perform_async("dead", q)}]
  }.to_h
  out({"jids" => jids})
when "hold"
  q, release = rest
  out({"jid" => HoldJob.set(queue: q).perform_async(release)})
when "fill"
  jids = rest.map { |q|
    ready = 3.times.map { |i| Sidekiq::Client.push("class" => "RecordJob", "queue" => q, "args" => ["ready", q, i]) }
    scheduled = 2.times.map { |i| RecordJob.set(queue: q).perform_in(3600 + i, "scheduled", q, i) }
    killed = {"class" => "RecordJob", "queue" => q, "args" => ["killed", q], "retry" => true,
              "jid" => SecureRandom.hex(12), "created_at" => Time.now.to_f, "enqueued_at" => Time.now.to_f,
              "error_class" => "RuntimeError", "error_message" => "killed by the interop test",
              "failed_at" => Time.now.to_f, "retry_count" => 2}
    Sidekiq::DeadSet.new.kill(JSON.generate(killed), notify_failure: false)
    [q, {"ready" => ready, "scheduled" => scheduled, "killed" => killed["jid"]}]
  }.to_h
  out({"jids" => jids})
when "counts"
  queues = rest.map { |q|
    [q, {"ready" => Sidekiq::Queue.new(q).size,
         "delayed" => set_entries(Sidekiq::ScheduledSet.new, q).size,
         "retry" => set_entries(Sidekiq::RetrySet.new, q).size,
         "dead" => set_entries(Sidekiq::DeadSet.new, q).size,
         "inflight" => work_of(q).size}]
  }.to_h
  s = Sidekiq::Stats.new
  out({"queues" => queues, "stats" => {"enqueued" => s.enqueued, "scheduled_size" => s.scheduled_size,
                                        "retry_size" => s.retry_size, "dead_size" => s.dead_size, "queues" => s.queues}})
when "state"
  states = rest.map { |jid|
    found = nil
    {"schedule" => Sidekiq::ScheduledSet.new, "retry" => Sidekiq::RetrySet.new, "dead" => Sidekiq::DeadSet.new}.each do |name, set|
      e = set.find_job(jid)
      found = {"state" => name, "queue" => e.queue, "retry_count" => e["retry_count"]} if e
      break if found
    end
    Sidekiq::Queue.all.each do |queue|
      break if found
      e = queue.find_job(jid)
      found = {"state" => "queue", "queue" => queue.name, "retry_count" => e["retry_count"], "enqueued_at" => e["enqueued_at"]} if e
    end
    Sidekiq::Workers.new.each do |_pid, _tid, w|
      break if found
      found = {"state" => "busy", "queue" => w["queue"]} if w["payload"]["jid"] == jid
    end
    [jid, found]
  }.to_h
  out({"states" => states})
when "retry"
  jid = rest.first
  e = Sidekiq::RetrySet.new.find_job(jid) || Sidekiq::DeadSet.new.find_job(jid)
  e&.retry
  out({"retried" => !e.nil?})
else
  abort "interop.rb: unknown command #{cmd.inspect}"
end
