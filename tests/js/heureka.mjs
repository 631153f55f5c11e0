// Helpers for running a heureka server process under node:test.

import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

// heurekaBin returns HEUREKA_BIN, or builds the binary into a temporary
// directory when it is unset (handy when running `node --test` by hand).
export function heurekaBin() {
  if (process.env.HEUREKA_BIN) {
    return { bin: process.env.HEUREKA_BIN, cleanup() {} };
  }
  const dir = mkdtempSync(join(tmpdir(), 'heureka-js-'));
  const bin = join(dir, 'heureka');
  execFileSync('go', ['build', '-o', bin, './cmd/heureka'], { cwd: repoRoot, stdio: 'inherit' });
  return { bin, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

// startServer runs `heureka server --listen 127.0.0.1:0` and resolves once it
// logs its address (at most 15 s). The returned object's stop() sends SIGTERM
// and resolves with the exit code (SIGKILL after 10 s).
export async function startServer(bin) {
  const child = spawn(bin, ['server', '--listen', '127.0.0.1:0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const log = [];
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });

  const addr = await new Promise((resolve, reject) => {
    let pending = '';
    const timer = setTimeout(() => {
      reject(new Error(`heureka did not log its address within 15s; log:\n${log.join('\n')}`));
    }, 15000);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`heureka exited (code ${code}, signal ${signal}) before listening; log:\n${log.join('\n')}`));
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      pending += chunk;
      let nl;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        log.push(line);
        if (line.includes('msg="heureka server listening"')) {
          const m = /addr=(\S+)/.exec(line);
          if (m) {
            clearTimeout(timer);
            resolve(m[1].replace(/"/g, ''));
          }
        }
      }
    });
  });

  let stopping;
  return {
    addr,
    log,
    baseURL: `http://${addr}`,
    host: addr.slice(0, addr.lastIndexOf(':')),
    port: Number(addr.slice(addr.lastIndexOf(':') + 1)),
    stop() {
      if (!stopping) {
        stopping = (async () => {
          if (child.exitCode !== null || child.signalCode !== null) {
            return exited;
          }
          child.kill('SIGTERM');
          const ac = new AbortController();
          const timeout = sleep(10000, 'timeout', { signal: ac.signal }).catch(() => null);
          const res = await Promise.race([exited, timeout]);
          ac.abort();
          if (res === 'timeout') {
            child.kill('SIGKILL');
            await exited;
            return { code: null, signal: 'SIGKILL', timedOut: true };
          }
          return res;
        })();
      }
      return stopping;
    },
  };
}

// waitFor polls check() every 100 ms until it returns a truthy value, and
// throws after timeoutMs with describe() in the message.
export async function waitFor(what, timeoutMs, check, describe = () => '') {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}. ${describe()}`);
    }
    await sleep(100);
  }
}

// quietLogger satisfies eureka-js-client's logger option, keeping the most
// recent messages for failure reports instead of printing them.
export function quietLogger(name) {
  const lines = [];
  const rec = (level) => (...args) => {
    lines.push(`${name} ${level}: ${args.map((a) => (a instanceof Error ? a.message : String(a))).join(' ')}`);
    if (lines.length > 200) lines.shift();
  };
  return {
    lines,
    error: rec('error'),
    warn: rec('warn'),
    info: rec('info'),
    debug: rec('debug'),
    level: () => 50,
  };
}
