// The real npm `webhdfs` client (1.2.0) writes and reads files through
// heureka's WebHDFS gateway while a DataNode is killed and the NameNode
// fails over. The cluster (registry, simulated daemons, agents, gateway)
// is started by tests/hdfs's TestWebHDFSNodeClient, which runs this file
// with its addresses in the environment; `npm test` runs that Go test.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import WebHDFS from 'webhdfs';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set: run this through \`npm test\` (tests/hdfs TestWebHDFSNodeClient)`);
  return v;
};

const [gwHost, gwPort] = env('GATEWAY').split(':');
const hdfs = WebHDFS.createClient({ host: gwHost, port: Number(gwPort), path: '/webhdfs/v1', user: 'nodeclient' });

const writeFile = (path, data) => new Promise((resolve, reject) => {
  hdfs.writeFile(path, data, (err) => (err ? reject(new Error(`writeFile ${path}: ${err.message}`)) : resolve()));
});
const readFile = (path) => new Promise((resolve, reject) => {
  hdfs.readFile(path, (err, data) => (err ? reject(new Error(`readFile ${path}: ${err.message}`)) : resolve(data)));
});
const stat = (path) => new Promise((resolve, reject) => {
  hdfs.stat(path, (err, st) => (err ? reject(err) : resolve(st)));
});

async function post(control, path) {
  const res = await fetch(`http://${control}${path}`, { method: 'POST' });
  assert.equal(res.status, 200, `POST ${control}${path}: ${res.status}`);
  return res.json();
}

async function state(control) {
  const res = await fetch(`http://${control}/sim/state`);
  return res.json();
}

// killAndWait sends SIGKILL and waits (at most 10 s) until the process is gone.
async function killAndWait(pid) {
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 500; i++) {
    try { process.kill(pid, 0); } catch { return; }
    await sleep(20);
  }
  throw new Error(`process ${pid} still alive 10 s after SIGKILL`);
}

test('npm webhdfs through the gateway: DataNode killed, NameNode failed over', async () => {
  const dnPid = Number(env('DEAD_DN_PID'));
  const liveControls = env('LIVE_DN_CONTROLS').split(',');
  const [nn1, nn2] = env('NN_CONTROLS').split(',');
  const written = new Map();
  const afterKill = [];
  const write = async (phase, n) => {
    for (let i = 0; i < n; i++) {
      const p = `/node/${phase}/file-${i}.txt`;
      const data = Buffer.from(`${phase} ${i} `.repeat(40 + i));
      await writeFile(p, data);
      written.set(p, data);
      if (phase !== 'before') afterKill.push(p);
    }
  };

  await write('before', 5);
  await killAndWait(dnPid);
  await write('dn-killed', 10);
  await post(nn1, '/sim/ha?state=standby');
  await post(nn2, '/sim/ha?state=active');
  await write('failed-over', 10);

  for (const [p, data] of written) {
    const got = await readFile(p);
    assert.ok(Buffer.compare(Buffer.from(got), data) === 0, `${p}: read back ${got.length} bytes, wrote ${data.length}`);
  }
  const st = await stat('/node/failed-over/file-0.txt');
  assert.equal(st.type, 'FILE');
  assert.equal(st.length, written.get('/node/failed-over/file-0.txt').length);

  // Every write after the kill landed on a live DataNode.
  const landed = new Set();
  for (const c of liveControls) {
    for (const p of (await state(c)).webhdfs.recent) landed.add(p);
  }
  for (const p of afterKill) assert.ok(landed.has(p), `${p} did not land on a live DataNode`);
});

test('npm webhdfs gets WebHDFS errors from the gateway', async () => {
  await assert.rejects(readFile('/node/does-not-exist'), /does not exist|not found/i);
  await assert.rejects(stat('/node/../etc'), /Invalid path name/);
});
