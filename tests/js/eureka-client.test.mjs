// End-to-end: the real eureka-js-client 4.5.0 against a heureka process.
//
// Two registering clients (A on the Spring prefix /eureka/apps/, B on the
// Netflix prefix /eureka/v2/apps/) and a fetch-only client C, all in one app.
// The steps run in order and share state; every wait is bounded.

import { describe, before, after, test } from 'node:test';
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { Eureka } from 'eureka-js-client';
import { heurekaBin, startServer, waitFor, quietLogger } from './heureka.mjs';

const APP = 'heureka-js';
const APP_KEY = 'HEUREKA-JS'; // how the registry names it
const VIP = 'heureka-js.test';
const HEARTBEAT_MS = 1000;
const FETCH_MS = 500;

// The metadata each instance registers: a dotted key and an underscored one
// (JSON carries key names verbatim, so `disk_used` must come back as is).
function metadataFor(name) {
  return { 'hdfs.rack': `/dc1/rack-${name}`, disk_used: `${name}-42`, role: 'datanode' };
}

function instanceConfig(name, port) {
  const hostName = `${name}.example.net`;
  return {
    app: APP,
    instanceId: `${hostName}:${APP}:${port}`,
    hostName,
    ipAddr: '127.0.0.1',
    port: { $: port, '@enabled': 'true' },
    vipAddress: VIP,
    statusPageUrl: `http://${hostName}:${port}/info`,
    dataCenterInfo: {
      '@class': 'com.netflix.appinfo.InstanceInfo$DefaultDataCenterInfo',
      name: 'MyOwn',
    },
    metadata: metadataFor(name),
  };
}

function promisify(fn) {
  return new Promise((resolve, reject) => fn((err) => (err ? reject(err) : resolve())));
}

// withTimeout rejects if p has not settled within ms.
function withTimeout(what, ms, p) {
  let timer;
  const t = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${ms} ms`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

describe('eureka-js-client 4.5.0 against heureka', { timeout: 120000 }, () => {
  let built;
  let server;
  const clients = {};
  const loggers = {};

  // A renews every second on a 3 s lease; B sends no leaseInfo (defaults).
  const A = { name: 'a', port: 9866, servicePath: '/eureka/apps/' };
  const B = { name: 'b', port: 9867, servicePath: '/eureka/v2/apps/' };
  for (const x of [A, B]) {
    x.config = instanceConfig(x.name, x.port);
    x.id = x.config.instanceId;
  }
  A.config.leaseInfo = { renewalIntervalInSecs: 1, durationInSecs: 3 };

  function newClient(name, eureka, instance = {}) {
    loggers[name] = quietLogger(name);
    const c = new Eureka({
      logger: loggers[name],
      cwd: '/nonexistent', // no eureka-client.yml lookups
      instance,
      eureka: {
        host: server.host,
        port: server.port,
        heartbeatInterval: HEARTBEAT_MS,
        registryFetchInterval: FETCH_MS,
        maxRetries: 0,
        ...eureka,
      },
    });
    clients[name] = c;
    return c;
  }

  // clientLogs is appended to failure messages.
  function clientLogs() {
    const all = Object.values(loggers).flatMap((l) => l.lines.slice(-10));
    return `\nclient log (last lines):\n${all.join('\n')}\nserver log (last lines):\n${server.log.slice(-20).join('\n')}`;
  }

  // rawInstance GETs one instance as JSON over the Spring prefix.
  async function rawInstance(id) {
    const res = await fetch(`${server.baseURL}/eureka/apps/${APP_KEY}/${encodeURIComponent(id)}`, {
      headers: { Accept: 'application/json' },
    });
    const body = res.status === 200 ? (await res.json()).instance : await res.text();
    return { status: res.status, body };
  }

  // cView summarises what client C holds for the app: id → instance.
  function cView() {
    const m = new Map();
    for (const inst of clients.c.getInstancesByAppId(APP)) {
      m.set(inst.instanceId, inst);
    }
    return m;
  }

  function viewString() {
    return `C sees: ${JSON.stringify([...cView().values()].map((i) => [i.instanceId, i.status]))}`;
  }

  // The steps share state: once one fails, the rest are skipped rather
  // than reporting failures that only echo the first.
  let failedStep = null;
  function step(name, fn) {
    test(name, async (t) => {
      if (failedStep) {
        t.skip(`needs "${failedStep}", which failed`);
        return;
      }
      try {
        await fn(t);
      } catch (err) {
        failedStep = name;
        throw err;
      }
    });
  }

  before(async () => {
    built = heurekaBin();
    server = await startServer(built.bin);
  });

  after(async () => {
    for (const c of Object.values(clients)) {
      clearInterval(c.heartbeat);
      clearInterval(c.registryFetch);
    }
    if (server) {
      const res = await server.stop();
      assert.equal(res.code, 0, `heureka exit after SIGTERM: ${JSON.stringify(res)}\n${server.log.join('\n')}`);
    }
    built?.cleanup();
  });

  step('A (Spring prefix) and B (Netflix prefix) register; C sees both UP with metadata', async () => {
    A.registeredAt = Date.now();
    for (const x of [A, B]) {
      const c = newClient(x.name, { servicePath: x.servicePath }, x.config);
      // start() registers (expects 204) and does a first full fetch (expects 200 JSON).
      await withTimeout(`client ${x.name} start`, 10000, promisify((cb) => c.start(cb)));
    }
    const c = newClient('c', { servicePath: '/eureka/apps/', registerWithEureka: false, fetchRegistry: true });
    await withTimeout('client c start', 10000, promisify((cb) => c.start(cb)));

    await waitFor('C to see A and B UP', 15000, () => {
      const v = cView();
      return v.has(A.id) && v.has(B.id) && [...v.values()].every((i) => i.status === 'UP');
    }, () => viewString() + clientLogs());

    const v = cView();
    assert.equal(v.size, 2, viewString());
    for (const x of [A, B]) {
      const inst = v.get(x.id);
      assert.equal(inst.app, APP_KEY);
      assert.equal(inst.hostName, x.config.hostName);
      assert.equal(inst.ipAddr, '127.0.0.1');
      assert.equal(Number(inst.port.$), x.port);
      assert.equal(String(inst.port['@enabled']), 'true');
      assert.equal(inst.vipAddress, VIP);
      assert.equal(inst.statusPageUrl, x.config.statusPageUrl);
      assert.deepEqual(inst.metadata, metadataFor(x.name));
    }
    const byVip = clients.c.getInstancesByVipAddress(VIP).map((i) => i.instanceId).sort();
    assert.deepEqual(byVip, [A.id, B.id].sort());

    // B sent no leaseInfo: the server applies Eureka's defaults. A's is kept.
    const rawB = await rawInstance(B.id);
    assert.equal(rawB.status, 200, JSON.stringify(rawB.body));
    assert.equal(rawB.body.leaseInfo.renewalIntervalInSecs, 30);
    assert.equal(rawB.body.leaseInfo.durationInSecs, 90);
    const rawA = await rawInstance(A.id);
    assert.equal(rawA.status, 200, JSON.stringify(rawA.body));
    assert.equal(rawA.body.leaseInfo.renewalIntervalInSecs, 1);
    assert.equal(rawA.body.leaseInfo.durationInSecs, 3);
  });

  step('A heartbeats keep it registered beyond its 3 s lease', async () => {
    for (let i = 0; i < 3; i++) {
      await withTimeout(`heartbeat ${i + 1} of A`, 3 * HEARTBEAT_MS + 2000, once(clients.a, 'heartbeat'));
    }
    // Outlive the lease by a margin: only renewals can keep A now.
    const lease = A.config.leaseInfo.durationInSecs * 1000;
    const wait = A.registeredAt + lease + 1500 - Date.now();
    if (wait > 0) await sleep(wait);
    const now = await rawInstance(A.id);
    assert.equal(now.status, 200, `A expired although it heartbeats: ${JSON.stringify(now.body)}${clientLogs()}`);
    assert.equal(now.body.status, 'UP');
    assert.ok(cView().has(A.id), viewString());
  });

  step('B re-registers after its heartbeat gets 404', async () => {
    const reregistered = withTimeout('B re-registering', 3 * HEARTBEAT_MS + 5000, once(clients.b, 'registered'));
    let done = false;
    reregistered.then(() => { done = true; }, () => {});

    const del = await fetch(`${server.baseURL}/eureka/v2/apps/${APP_KEY}/${encodeURIComponent(B.id)}`, { method: 'DELETE' });
    assert.equal(del.status, 200, 'DELETE of B');
    if (!done) {
      const gone = await rawInstance(B.id);
      // B may already have heartbeaten (404) and registered again in between.
      if (!done) assert.equal(gone.status, 404, 'B should be gone right after DELETE');
    }

    await reregistered;
    const back = await rawInstance(B.id);
    assert.equal(back.status, 200, `B not back after re-registering: ${JSON.stringify(back.body)}${clientLogs()}`);
    assert.equal(back.body.status, 'UP');
    assert.deepEqual(back.body.metadata, metadataFor('b'));
    assert.ok(
      loggers.b.lines.some((l) => l.includes('heartbeat FAILED, Re-registering')),
      `B's log does not show the 404-triggered re-registration${clientLogs()}`,
    );
    // And its heartbeats succeed again.
    await withTimeout('heartbeat of B after re-registering', 3 * HEARTBEAT_MS + 2000, once(clients.b, 'heartbeat'));
  });

  step('D stops heartbeating without deregistering; it expires and C loses it', async () => {
    const D = instanceConfig('d', 9868);
    D.leaseInfo = { renewalIntervalInSecs: 1, durationInSecs: 2 };
    const d = newClient('d', { servicePath: '/eureka/apps/', fetchRegistry: false, heartbeatInterval: 500 }, D);
    let lastBeat = Date.now();
    d.on('heartbeat', () => { lastBeat = Date.now(); });
    await withTimeout('client d start', 10000, promisify((cb) => d.start(cb)));
    await waitFor('C to see D', 5000, () => cView().has(D.instanceId), () => viewString() + clientLogs());
    await withTimeout('heartbeat of D', 3000, once(d, 'heartbeat'));

    // The process "dies": no more heartbeats, no DELETE.
    clearInterval(d.heartbeat);
    const stoppedAt = Date.now();
    await waitFor('D to expire on the server', 5000, async () => (await rawInstance(D.instanceId)).status === 404,
      () => clientLogs());
    const goneAfter = Date.now() - lastBeat;
    assert.ok(goneAfter >= 1900, `D expired ${goneAfter} ms after its last heartbeat, before its 2 s lease ended`);
    assert.ok(Date.now() - stoppedAt <= 2000 + 1500, `D expired only ${Date.now() - stoppedAt} ms after heartbeats stopped`);
    await waitFor('C to lose D', 3000, () => !cView().has(D.instanceId), () => viewString() + clientLogs());
    assert.ok(cView().has(A.id) && cView().has(B.id), viewString());
    delete clients.d;
  });

  step('A deregisters; C loses A while B remains', async () => {
    // stop() sends DELETE and calls back with an error unless the answer is 200.
    await withTimeout('client a stop', 10000, promisify((cb) => clients.a.stop(cb)));
    delete clients.a;

    const gone = await rawInstance(A.id);
    assert.equal(gone.status, 404, 'A must be gone from the registry at once');

    await waitFor('C to lose A and keep B', 5000, () => {
      const v = cView();
      return !v.has(A.id) && v.has(B.id);
    }, () => viewString() + clientLogs());

    // B keeps heartbeating and stays in C's view over a few more fetches.
    await withTimeout('heartbeat of B', 3 * HEARTBEAT_MS + 2000, once(clients.b, 'heartbeat'));
    await sleep(3 * FETCH_MS);
    const v = cView();
    assert.deepEqual([...v.keys()], [B.id], viewString());
    assert.deepEqual(v.get(B.id).metadata, metadataFor('b'));

    await withTimeout('client b stop', 10000, promisify((cb) => clients.b.stop(cb)));
    delete clients.b;
    await waitFor('C to see the app empty', 5000, () => cView().size === 0, () => viewString() + clientLogs());
    await withTimeout('client c stop', 10000, promisify((cb) => clients.c.stop(cb)));
    delete clients.c;
  });
});
