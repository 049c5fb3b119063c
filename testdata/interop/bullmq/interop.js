// BullMQ's own Queue, Worker and FlowProducer on a queue that chatq reads
// and operates, for pkg/queues/bullmq/interop_test.go. Run with NODE_PATH
// naming one of ../bullmq5/node_modules or ../bullmq6/node_modules:
//
//   node interop.js COMMAND REDIS_URL PREFIX QUEUE [ARGS...]
//
// Commands (each prints one JSON line on stdout, the last being its
// result, and exits; hold runs until killed):
//   fill              every state filled by BullMQ itself; prints
//                     {"version", "counts": getJobCounts(), "ids": {...}}
//   hold LOCK_MS      a Worker (lockDuration LOCK_MS) takes one job and
//                     never finishes it; prints {"active": id}, then waits
//   counts            {"counts": getJobCounts(), "paused": isPaused()}
//   state ID...       {"states": {id: getJob(id)?.getState() or null}}
//   pause | resume    the library's Queue.pause() / resume()
//   add NAME          Queue.add(NAME, {kind: NAME}); prints {"id"}
//   fail N            N jobs added and failed by a Worker; prints {"ids"}
//   work ID...        a Worker completes jobs until every ID is completed
//                     or failed and no job is ready or active (30 s at
//                     most); prints {"processed": [ids its processor ran
//                     for]}
'use strict';
const { Queue, Worker, FlowProducer } = require('bullmq');
const IORedis = require('ioredis');

const [cmd, url, prefix, name, ...args] = process.argv.slice(2);
const conn = () => new IORedis(url, { maxRetriesPerRequest: null });
const out = (v) => process.stdout.write(JSON.stringify(v) + '\n');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, f, ms = 20000) {
  const end = Date.now() + ms;
  for (;;) {
    if (await f()) return;
    if (Date.now() > end) throw new Error('timed out waiting for ' + what);
    await sleep(20);
  }
}

async function fill(queue) {
  const ids = {};
  // Failed and completed: a worker of our own fails the jobs named "fail".
  const failing = [], completing = [];
  for (let i = 0; i < 3; i++) failing.push((await queue.add('fail', { kind: 'fail', n: i }, { attempts: 1 })).id);
  // One with a priority: a 6.x retry puts it back among the prioritized.
  failing.push((await queue.add('fail', { kind: 'fail', n: 3 }, { attempts: 1, priority: 3 })).id);
  for (let i = 0; i < 2; i++) completing.push((await queue.add('ok', { kind: 'ok', n: i })).id);
  const worker = new Worker(name, async (job) => {
    if (job.name === 'fail') throw new Error('boom ' + job.data.n);
    return { ok: job.data.n };
  }, { connection: conn(), prefix });
  await until('failed and completed', async () => {
    const c = await queue.getJobCounts('failed', 'completed');
    return c.failed === 4 && c.completed === 2;
  });
  await worker.close();
  ids.failed = failing;
  ids.completed = completing;
  // The job a holding worker will take: the oldest in wait.
  ids.hold = (await queue.add('hold', { kind: 'hold' })).id;
  ids.wait = [];
  for (let i = 0; i < 2; i++) ids.wait.push((await queue.add('plain', { kind: 'plain', n: i, needle: i === 1 ? 'haystack-needle' : '' })).id);
  ids.prioritized = [];
  for (let i = 0; i < 2; i++) ids.prioritized.push((await queue.add('urgent', { kind: 'urgent', n: i }, { priority: 5 })).id);
  ids.delayed = [];
  for (let i = 0; i < 2; i++) ids.delayed.push((await queue.add('later', { kind: 'later', n: i }, { delay: 3600000 })).id);
  const flow = new FlowProducer({ connection: conn(), prefix });
  const tree = await flow.add({
    name: 'parent', queueName: name, data: { kind: 'parent' },
    children: [{ name: 'child', queueName: name, data: { kind: 'child' } }],
  });
  await flow.close();
  ids.parent = tree.job.id;
  ids.child = tree.children[0].job.id;
  out({ version: await queue.getVersion(), counts: await queue.getJobCounts(), ids });
}

async function failJobs(queue, n) {
  const ids = [];
  for (let i = 0; i < n; i++) ids.push((await queue.add('fail', { kind: 'fail', n: i }, { attempts: 1 })).id);
  const worker = new Worker(name, async () => { throw new Error('boom'); }, { connection: conn(), prefix });
  await until('failed', async () => (await queue.getJobCounts('failed')).failed >= n);
  await worker.close();
  return ids;
}

async function hold(queue, lockMs) {
  const worker = new Worker(name, async (job) => {
    out({ active: job.id });
    await new Promise(() => {}); // never finishes
  // No stalled-job check of its own: a lock that lapses on a loaded
  // machine would let it move the job back before chatq's recover does.
  }, { connection: conn(), prefix, lockDuration: lockMs, skipStalledCheck: true, concurrency: 1 });
  worker.on('error', () => {});
  await new Promise(() => {});
}

async function states(queue, ids) {
  const res = {};
  for (const id of ids) {
    const job = await queue.getJob(id);
    res[id] = job ? await job.getState() : null;
  }
  out({ states: res });
}

async function work(queue, ids) {
  const processed = [];
  const worker = new Worker(name, async (job) => {
    processed.push(job.id);
    return { worked: true };
  }, { connection: conn(), prefix });
  const finished = async () => {
    for (const id of ids) {
      const job = await queue.getJob(id);
      const state = job && await job.getState();
      if (state !== 'completed' && state !== 'failed') return false;
    }
    // and nothing else ready is left for the next command's worker
    const c = await queue.getJobCounts('waiting', 'prioritized', 'active');
    return c.waiting + c.prioritized + c.active === 0;
  };
  try {
    await until('jobs ' + ids.join(',') + ' to finish', finished, 30000);
  } finally {
    await worker.close();
  }
  out({ processed });
}

async function main() {
  const queue = new Queue(name, { connection: conn(), prefix });
  await queue.waitUntilReady();
  switch (cmd) {
    case 'fill': await fill(queue); break;
    case 'hold': await hold(queue, Number(args[0] || 30000)); break;
    case 'counts': out({ counts: await queue.getJobCounts(), paused: await queue.isPaused() }); break;
    case 'state': await states(queue, args); break;
    case 'pause': await queue.pause(); out({ paused: await queue.isPaused() }); break;
    case 'resume': await queue.resume(); out({ paused: await queue.isPaused() }); break;
    case 'work': await work(queue, args); break;
    case 'fail': out({ ids: await failJobs(queue, Number(args[0])) }); break;
    case 'add': out({ id: (await queue.add(args[0], { kind: args[0] })).id }); break;
    default: throw new Error('unknown command ' + cmd);
  }
  await queue.close();
  process.exit(0);
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack || err) + '\n');
  process.exit(1);
});
