# worker.rb: the job classes of chatq's Sidekiq interop test, required by
# the real `sidekiq` executable (-r) and by interop.rb. Every job appends
# a line {"jid", "class", "args"} to $CHATQ_SIDEKIQ_RAN before it
# does anything else, so the test sees what the worker ran.
require "sidekiq"
require "sidekiq/api"
require "json"

module Ran
  def self.record(job, jid, args)
    path = ENV["CHATQ_SIDEKIQ_RAN"] or return
    File.open(path, "a") do |f|
      f.flock(File::LOCK_EX)
      f.puts(JSON.generate({"jid" => jid, "class" => job.class.name, "args" => args}))
    end
  end
end

# RecordJob succeeds.
class RecordJob
  include Sidekiq::Worker
  sidekiq_options queue: "chatq"
  def perform(*args)
    Ran.record(self, jid, args)
  end
end

# FailJob raises; its next retry is an hour away, so that it stays in the
# retry set for the test (and has its backtrace kept).
class FailJob
  include Sidekiq::Worker
  sidekiq_options queue: "chatq", retry: 5, backtrace: true
  sidekiq_retry_in { |_count, _ex| 3600 }
  def perform(*args)
    Ran.record(self, jid, args)
    raise ArgumentError, "chatq interop failure #{args.inspect}"
  end
end

# DeadJob raises with retry: 0, which sends it to the dead set at once.
class DeadJob
  include Sidekiq::Worker
  sidekiq_options queue: "chatq", retry: 0
  def perform(*args)
    Ran.record(self, jid, args)
    raise "chatq interop dead #{args.inspect}"
  end
end

# HoldJob runs until the file args[0] exists (at most two minutes): the
# job in flight.
class HoldJob
  include Sidekiq::Worker
  sidekiq_options queue: "chatq", retry: false
  def perform(release, *args)
    Ran.record(self, jid, [release, *args])
    deadline = Time.now + 120
    sleep 0.05 until File.exist?(release) || Time.now > deadline
  end
end
