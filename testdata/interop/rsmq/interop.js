// Runs rsmq (the npm client) operations for chatq's interoperability test
// (pkg/delayq/interop_test.go):
//
//   node interop.js REDIS_URL NS '[["sendMessage", {...}], ...]'
//
// and prints a JSON array with one {"ok": result} or {"err": name} per
// operation. "receiveUntil" repeats receiveMessage every 10ms until a
// message arrives or options.timeout ms pass.
"use strict";
const RedisSMQ = require("rsmq");

async function main() {
  const [url, ns, opsJSON] = process.argv.slice(2);
  const u = new URL(url);
  const rsmq = new RedisSMQ({
    host: u.hostname,
    port: Number(u.port || 6379),
    ns: ns,
    realtime: true,
    options: { db: Number(u.pathname.slice(1) || 0), password: u.password || null },
  });
  const out = [];
  for (const [op, opts] of JSON.parse(opsJSON)) {
    try {
      let res;
      if (op === "receiveUntil") {
        const deadline = Date.now() + opts.timeout;
        const o = Object.assign({}, opts);
        delete o.timeout;
        for (;;) {
          res = await rsmq.receiveMessageAsync(o);
          if (res.id || Date.now() > deadline) break;
          await new Promise((r) => setTimeout(r, 10));
        }
      } else if (op === "listQueues") {
        res = await rsmq.listQueuesAsync();
      } else {
        res = await rsmq[op + "Async"](opts);
      }
      out.push({ ok: res });
    } catch (e) {
      out.push({ err: e.name === "Error" ? e.message : e.name }); // rsmq names its errors: queueNotFound, messageTooLong, ...
    }
  }
  console.log(JSON.stringify(out));
  await rsmq.quitAsync();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
