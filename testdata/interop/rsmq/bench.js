// The reference for chatq's queue benchmark (scripts/perf.sh): the rsmq npm
// client pushing, receiving and deleting messages on the same server.
//
//   node bench.js REDIS_URL NS CLIENTS REQUESTS SIZE
//
// CLIENTS loops run concurrently, each with a connection of its own, and
// share REQUESTS operations per step. Prints one JSON object per step:
// {"step":"push","ops_per_sec":...}. rsmq's receive takes two round trips
// (MULTI for the time, then its receive script).
"use strict";
const RedisSMQ = require("rsmq");

async function main() {
  const [url, ns, clientsArg, requestsArg, sizeArg] = process.argv.slice(2);
  const clients = Number(clientsArg), requests = Number(requestsArg);
  const u = new URL(url);
  const connect = () => new RedisSMQ({
    host: u.hostname, port: Number(u.port || 6379), ns,
    options: { db: Number(u.pathname.slice(1) || 0) },
  });
  const conns = Array.from({ length: clients }, connect);
  const qname = "bench";
  await conns[0].createQueueAsync({ qname, vt: 3600 });
  const message = "x".repeat(Number(sizeArg));
  const received = [];

  const step = async (name, op) => {
    let next = 0;
    const start = process.hrtime.bigint();
    await Promise.all(conns.map(async (rsmq) => {
      while (next++ < requests) await op(rsmq);
    }));
    const secs = Number(process.hrtime.bigint() - start) / 1e9;
    console.log(JSON.stringify({ step: name, clients, requests, ops_per_sec: requests / secs }));
  };
  await step("push", (rsmq) => rsmq.sendMessageAsync({ qname, message }));
  await step("poll", async (rsmq) => {
    const m = await rsmq.receiveMessageAsync({ qname });
    if (!m.id) throw new Error("poll received nothing");
    received.push(m.id);
  });
  await step("ack", (rsmq) => rsmq.deleteMessageAsync({ qname, id: received.pop() }));
  await conns[0].deleteQueueAsync({ qname });
  conns.forEach((c) => c.quit());
}

main().catch((e) => { console.error(e); process.exit(1); });
