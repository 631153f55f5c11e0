// heureka dashboard. Plain JavaScript, no build step, no dependencies.
//
// Data flow: GET eureka/apps (JSON) once → the instance table; GET
// v1/events (EventSource) from that listing's version → live updates of the
// table and the event feed; GET v1/status every few seconds → peers and
// self-preservation. Everything from the server is untrusted: the page is
// built with createElement/textContent only; no string is ever parsed as
// markup.
'use strict';

(() => {
  const STATUS_EVERY_MS = 5000;
  const MAX_EVENTS = 200;
  const HISTORY = 100; // recent changes replayed into the feed on load
  const FULL_PERCENT = 90; // HDFS placement skips nodes above this
  const WARN_PERCENT = 75;
  const FRESH_MS = 4000; // how long a changed row stays highlighted
  const EVENT_TYPES = ['registered', 'status_changed', 'metadata_changed', 'cancelled', 'expired'];
  // Events about the registry itself: they change the status card.
  const NOTICE_TYPES = ['self_preservation_entered', 'self_preservation_left', 'peer_lost', 'peer_found'];
  const STATUS_ORDER = ['UP', 'DOWN', 'OUT_OF_SERVICE', 'STARTING', 'UNKNOWN'];

  const state = {
    apps: new Map(), // app name → Map(instance id → view)
    version: 0, // registry version the table reflects
    node: '',
    loaded: false,
    status: null,
    statusError: '',
    streamState: 'connecting', // connecting | live | reconnecting | offline
    events: [], // newest first
    fresh: new Map(), // instance key → time it changed
    filter: '',
    showMetadata: false,
  };

  let source = null;
  let retryTimer = 0;
  let retryDelay = 1000;

  // ---- DOM helpers ------------------------------------------------------

  const $ = (id) => document.getElementById(id);

  // el builds an element. attrs: class, text, dataset (object) or plain
  // attribute names (never event handlers or URLs from data).
  function el(tag, attrs, ...children) {
    const e = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null || v === false) continue;
        if (k === 'class') e.className = v;
        else if (k === 'text') e.textContent = String(v);
        else if (k === 'dataset') Object.assign(e.dataset, v);
        else e.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (const c of children) {
      if (c === undefined || c === null || c === false) continue;
      e.append(c instanceof Node ? c : String(c));
    }
    return e;
  }

  function clear(node) {
    while (node.firstChild) node.removeChild(node.firstChild);
  }

  // safeLink returns an <a> only for http(s) URLs; anything else is text.
  function safeLink(url, text) {
    try {
      const u = new URL(url, location.href);
      if (u.protocol === 'http:' || u.protocol === 'https:') {
        return el('a', { href: u.href, rel: 'noopener noreferrer' }, text);
      }
    } catch (_) { /* not a URL */ }
    return el('span', null, text);
  }

  // ---- formatting -------------------------------------------------------

  function ago(ms) {
    if (!ms) return '';
    const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
    if (s < 60) return s + 's ago';
    if (s < 3600) return Math.floor(s / 60) + 'm ago';
    if (s < 86400) return Math.floor(s / 3600) + 'h ago';
    return Math.floor(s / 86400) + 'd ago';
  }

  function clock(ms) {
    const d = new Date(ms);
    return d.toLocaleTimeString([], { hour12: false });
  }

  function bytes(n) {
    if (!(n > 0)) return '';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (n >= 100 || i === 0 ? n.toFixed(0) : n.toFixed(1)) + ' ' + units[i];
  }

  function count(n) {
    return Number.isFinite(n) ? n.toLocaleString() : '';
  }

  function statusBadge(status) {
    const s = String(status || 'UNKNOWN');
    return el('span', { class: 'badge st-' + s.toLowerCase().replace(/[^a-z_]/g, ''), text: s });
  }

  // ---- the registry model -----------------------------------------------

  function asArray(v) {
    if (Array.isArray(v)) return v;
    return v === undefined || v === null ? [] : [v];
  }

  function cleanMetadata(md) {
    const out = {};
    if (md && typeof md === 'object') {
      for (const [k, v] of Object.entries(md)) {
        if (k !== '@class') out[k] = String(v);
      }
    }
    return out;
  }

  function intOf(v) {
    const n = Number(v);
    return Number.isFinite(n) && n >= 0 ? n : NaN;
  }

  // view is what a table row shows, derived from an instance's fields and
  // its HDFS metadata keys (rack, disk_used, disk_total, block_count,
  // version, status, ha_state).
  function view(app, id, host, status, metadata, changed) {
    const md = cleanMetadata(metadata);
    const used = intOf(md.disk_used);
    const total = intOf(md.disk_total);
    return {
      app, id, host, status: String(status || 'UNKNOWN'), metadata: md, changed,
      rack: md.rack || '',
      used, total,
      percent: total > 0 && used >= 0 ? Math.min(100, (used / total) * 100) : NaN,
      blocks: intOf(md.block_count),
      version: md.version || '',
      ha: md.ha_state || '',
      admin: md.status || '',
    };
  }

  function fromEureka(x) {
    const app = String(x.app || '').toUpperCase();
    const id = String(x.instanceId || x.hostName || '');
    const changed = Number(x.lastUpdatedTimestamp) || 0;
    return view(app, id, String(x.hostName || ''), x.status, x.metadata, changed);
  }

  function putInstance(v) {
    let m = state.apps.get(v.app);
    if (!m) { m = new Map(); state.apps.set(v.app, m); }
    m.set(v.id, v);
  }

  function removeInstance(app, id) {
    const m = state.apps.get(app);
    if (!m) return;
    m.delete(id);
    if (m.size === 0) state.apps.delete(app);
  }

  function getInstance(app, id) {
    const m = state.apps.get(app);
    return m ? m.get(id) : undefined;
  }

  // applyEvent updates the table from one event of v1/events. It returns
  // false when the event refers to an instance the table does not have,
  // which means the table missed something and must be read again.
  function applyEvent(type, ev) {
    const app = String(ev.app || '');
    const id = String(ev.id || '');
    const prev = getInstance(app, id);
    switch (type) {
      case 'registered':
        putInstance(view(app, id, String(ev.hostName || ''), ev.status, ev.metadata, ev.time));
        break;
      case 'status_changed':
        if (!prev) return false;
        putInstance({ ...prev, status: String(ev.status || 'UNKNOWN'), changed: ev.time });
        break;
      case 'metadata_changed':
        if (!prev) return false;
        putInstance(view(app, id, prev.host, prev.status, ev.metadata, ev.time));
        break;
      case 'cancelled':
      case 'expired':
        removeInstance(app, id);
        break;
      default:
        return true;
    }
    state.fresh.set(app + '\u0000' + id, Date.now());
    setTimeout(scheduleRender, FRESH_MS + 50);
    return true;
  }

  // ---- loading and following --------------------------------------------

  async function getJSON(path) {
    const resp = await fetch(path, { headers: { Accept: 'application/json' }, cache: 'no-store' });
    if (!resp.ok) {
      let msg = resp.status + ' ' + resp.statusText;
      try { const b = await resp.json(); if (b && b.error) msg += ': ' + b.error; } catch (_) { /* no body */ }
      throw new Error(path + ': ' + msg);
    }
    return { body: await resp.json(), headers: resp.headers };
  }

  // loadApps reads the whole registry and replaces the table.
  async function loadApps() {
    const { body, headers } = await getJSON('eureka/apps');
    const apps = new Map();
    const root = body && body.applications ? body.applications : {};
    state.apps = apps;
    for (const a of asArray(root.application)) {
      for (const x of asArray(a.instance)) putInstance(fromEureka(x));
    }
    state.version = Number(headers.get('X-Heureka-Version')) || 0;
    state.node = headers.get('X-Heureka-Node') || state.node;
    state.loaded = true;
  }

  function closeStream() {
    if (source) { source.close(); source = null; }
  }

  // follow (re)reads the registry and opens the event stream from its
  // version. withHistory asks for the last HISTORY changes too: they fill
  // the feed but are already part of the listing, so they leave the table
  // alone.
  async function follow(withHistory) {
    clearTimeout(retryTimer);
    closeStream();
    setStream(state.loaded ? 'reconnecting' : 'connecting');
    try {
      await loadApps();
      scheduleRender();
    } catch (err) {
      setStream('offline', 'cannot read the registry: ' + err.message);
      retryLater();
      return;
    }
    const listed = state.version;
    const since = withHistory ? Math.max(0, listed - HISTORY) : listed;
    const es = new EventSource('v1/events?since=' + since);
    source = es;
    let replayFailed = false;
    es.addEventListener('open', () => {
      if (source !== es) return;
      retryDelay = 1000;
      setStream('live');
    });
    es.addEventListener('error', () => {
      if (source !== es) return;
      if (es.readyState === EventSource.CLOSED) {
        setStream('offline', 'the event stream closed; retrying');
        retryLater();
      } else {
        setStream('reconnecting'); // the browser resumes with Last-Event-ID
      }
    });
    es.addEventListener('resync', (msg) => {
      if (source !== es) return;
      closeStream();
      if (withHistory && !replayFailed && state.events.length === 0) {
        // History no longer in the server's log: follow from the listing.
        replayFailed = true;
        follow(false);
        return;
      }
      let reason = '';
      try { reason = JSON.parse(msg.data).reason || ''; } catch (_) { /* none */ }
      addFeedNote('resynced: ' + (reason || 'the server asked to re-read the registry'));
      follow(false);
    });
    for (const type of NOTICE_TYPES) {
      es.addEventListener(type, (msg) => {
        if (source !== es) return;
        let ev;
        try { ev = JSON.parse(msg.data); } catch (_) { return; }
        addFeedEvent(type, ev);
        const seq = Number(msg.lastEventId) || 0;
        if (seq > state.version) state.version = seq;
        pollStatus();
      });
    }
    for (const type of EVENT_TYPES) {
      es.addEventListener(type, (msg) => {
        if (source !== es) return;
        let ev;
        try { ev = JSON.parse(msg.data); } catch (_) { return; }
        const seq = Number(msg.lastEventId) || Number(ev.seq) || 0;
        addFeedEvent(type, ev);
        if (seq > state.version || seq === 0) {
          if (!applyEvent(type, ev)) {
            addFeedNote('the table missed a change; reading the registry again');
            follow(false);
            return;
          }
          if (seq > state.version) state.version = seq;
        }
        scheduleRender();
      });
    }
  }

  function retryLater() {
    clearTimeout(retryTimer);
    retryTimer = setTimeout(() => follow(false), retryDelay);
    retryDelay = Math.min(retryDelay * 2, 30000);
  }

  async function pollStatus() {
    try {
      const { body } = await getJSON('v1/status');
      state.status = body;
      state.statusError = '';
      if (state.loaded && body.node && state.node && body.node !== state.node) {
        // Another server process answers now: versions are per process.
        addFeedNote('the server restarted (node ' + body.node + '); reading the registry again');
        state.node = body.node;
        follow(false);
      }
    } catch (err) {
      state.statusError = err.message;
    }
    scheduleRender();
  }

  function setStream(s, why) {
    state.streamState = s;
    state.streamWhy = why || '';
    scheduleRender();
  }

  // ---- the event feed -----------------------------------------------------

  function addFeedEvent(type, ev) {
    state.events.unshift({ type, ev });
    if (state.events.length > MAX_EVENTS) state.events.length = MAX_EVENTS;
  }

  function addFeedNote(text) {
    state.events.unshift({ type: 'note', ev: { time: Date.now(), text } });
    if (state.events.length > MAX_EVENTS) state.events.length = MAX_EVENTS;
    scheduleRender();
  }

  function eventDetail(type, ev) {
    switch (type) {
      case 'registered':
        return 'registered ' + (ev.status || 'UP') + (ev.hostName ? ' on ' + ev.hostName : '');
      case 'status_changed':
        return (ev.oldStatus || '?') + ' → ' + (ev.status || '?') + (ev.by ? ' by ' + ev.by : '');
      case 'metadata_changed':
        return 'metadata: ' + asArray(ev.keys).join(', ');
      case 'cancelled':
        return 'deregistered' + (ev.by ? ' by ' + ev.by : '');
      case 'expired':
        return 'lease expired' + (ev.cause ? ': ' + ev.cause : '');
      case 'self_preservation_entered':
        return 'expired leases are kept' + (ev.cause ? ': ' + ev.cause : '');
      case 'self_preservation_left':
        return ev.cause || 'expired leases are evicted again';
      case 'peer_found':
        return 'reachable again';
      case 'peer_lost':
        return 'unreachable' + (ev.cause ? ': ' + ev.cause : '');
      default:
        return ev.text || type;
    }
  }

  function renderEvents() {
    const list = $('events');
    clear(list);
    let shown = 0;
    for (const { type, ev } of state.events) {
      if (type === 'metadata_changed' && !state.showMetadata) continue;
      const labels = {
        note: 'note', self_preservation_entered: 'self-preservation on', self_preservation_left: 'self-preservation off',
        peer_lost: 'peer lost', peer_found: 'peer found',
      };
      const label = labels[type] || type.replace('_', ' ');
      const kind = type === 'status_changed' && ev.status ? 'ev-' + String(ev.status).toLowerCase() : 'ev-' + type;
      list.append(el('li', { class: 'event ' + kind, dataset: { type } },
        el('time', { text: clock(ev.time || Date.now()), title: new Date(ev.time || Date.now()).toISOString() }),
        el('span', { class: 'ev-type', text: label }),
        type === 'note' ? null : el('span', { class: 'ev-who' },
          el('span', { class: 'ev-app', text: ev.app || (ev.peer ? 'peer' : 'registry') }), ' ',
          el('span', { class: 'ev-id', text: ev.id || ev.peer || '' })),
        el('span', { class: 'ev-detail', text: eventDetail(type, ev) })));
      shown++;
    }
    if (shown === 0) {
      list.append(el('li', { class: 'empty muted', text: 'No events yet. Changes appear here as they happen.' }));
    }
  }

  // ---- rendering ------------------------------------------------------------

  let renderPending = false;
  function scheduleRender() {
    if (renderPending) return;
    renderPending = true;
    setTimeout(() => { renderPending = false; render(); }, 30);
  }

  function render() {
    renderHeader();
    renderSummary();
    renderPreservation();
    renderPeers();
    renderApps();
    renderEvents();
  }

  function renderHeader() {
    const conn = $('conn');
    const labels = { connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…', offline: 'offline' };
    conn.className = 'conn conn-' + state.streamState;
    conn.textContent = labels[state.streamState] || state.streamState;
    conn.title = state.streamWhy || '';

    const node = $('node');
    clear(node);
    const st = state.status;
    if (st) {
      node.append(el('span', null, 'node ', el('code', { text: st.node || state.node || '?' })),
        el('span', { class: 'sep' }, '·'),
        el('span', null, 'version ', el('code', { text: String(state.version) })),
        el('span', { class: 'sep' }, '·'),
        el('span', null, st.ready ? 'ready' : 'not ready'));
    }

    const banner = $('banner');
    const problems = [];
    if (state.statusError) problems.push('Cannot read v1/status: ' + state.statusError);
    if (state.streamState === 'offline' && state.streamWhy) problems.push(state.streamWhy);
    banner.hidden = problems.length === 0;
    banner.textContent = problems.join(' — ');
  }

  function statusCounts(instances) {
    const c = {};
    for (const v of instances) c[v.status] = (c[v.status] || 0) + 1;
    return c;
  }

  function allInstances() {
    const out = [];
    for (const m of state.apps.values()) for (const v of m.values()) out.push(v);
    return out;
  }

  function renderSummary() {
    const box = $('summary');
    clear(box);
    const all = allInstances();
    const c = statusCounts(all);
    const tile = (label, value, cls) => el('div', { class: 'tile ' + (cls || '') },
      el('div', { class: 'tile-value', text: value }), el('div', { class: 'tile-label', text: label }));
    box.append(tile('applications', count(state.apps.size)));
    box.append(tile('instances', count(all.length)));
    box.append(tile('up', count(c.UP || 0), 'tile-up'));
    box.append(tile('down', count(c.DOWN || 0), (c.DOWN || 0) > 0 ? 'tile-down' : ''));
    box.append(tile('out of service', count(c.OUT_OF_SERVICE || 0), (c.OUT_OF_SERVICE || 0) > 0 ? 'tile-oos' : ''));
    const full = all.filter((v) => v.percent >= FULL_PERCENT).length;
    box.append(tile('over ' + FULL_PERCENT + '% full', count(full), full > 0 ? 'tile-down' : ''));
    const sp = state.status && state.status.selfPreservation;
    box.append(tile('self-preservation', sp ? (sp.active ? 'PROTECTING' : (sp.mode === 'off' ? 'off' : 'idle')) : '…',
      sp && sp.active ? 'tile-down' : ''));
    const peers = (state.status && asArray(state.status.peers).filter((p) => !p.self)) || [];
    const reachable = peers.filter((p) => p.reachable).length;
    const lost = peers.filter((p) => peerHealth(p) === 'unreachable').length;
    box.append(tile('peers reachable', peers.length ? reachable + ' / ' + peers.length : 'none', lost > 0 ? 'tile-down' : ''));
  }

  function kv(list) {
    const dl = el('dl', { class: 'kv' });
    for (const [k, v] of list) {
      if (v === undefined || v === null || v === '') continue;
      dl.append(el('dt', { text: k }), el('dd', null, v));
    }
    return dl;
  }

  function renderPreservation() {
    const box = $('preservation');
    clear(box);
    const sp = state.status && state.status.selfPreservation;
    if (!sp) { box.append(el('p', { class: 'muted', text: state.statusError ? 'unavailable' : 'loading…' })); return; }
    let headline;
    let cls;
    if (sp.mode === 'off') {
      headline = 'Off: every expired lease is evicted.'; cls = 'sp-off';
    } else if (sp.active) {
      headline = 'Protecting: expired leases are held back.'; cls = 'sp-active';
    } else {
      headline = 'Not protecting: expired leases are evicted.'; cls = 'sp-idle';
    }
    box.append(el('div', { class: 'sp-state ' + cls, dataset: { active: String(!!sp.active) } },
      el('span', { class: 'dot' }), el('span', { text: headline })));
    if (sp.reason) box.append(el('p', { class: 'sp-reason', text: sp.reason }));
    const renews = count(sp.renewsLastMinute) + ' / ' + (Number.isFinite(sp.expectedRenewsPerMinute) ? sp.expectedRenewsPerMinute.toFixed(1) : '?');
    box.append(kv([
      ['mode', el('code', { text: sp.mode || '?' })],
      ['since', sp.active && sp.since ? ago(Date.parse(sp.since)) : ''],
      ['instances', count(sp.instances)],
      ['expired, held back', sp.active ? count(sp.expired) : ''],
      ['renewals last min / expected', renews],
      ['threshold', sp.threshold ? count(sp.threshold) : ''],
      ['peers reachable', sp.peers ? sp.peersReachable + ' / ' + sp.peers : ''],
    ]));
  }

  // peerHealth is 'self', 'reachable', 'unreachable', or 'unknown' for a
  // peer this server has not needed to talk to yet.
  function peerHealth(p) {
    if (p.self) return 'self';
    if (p.reachable) return 'reachable';
    return p.since || p.lastError ? 'unreachable' : 'unknown';
  }

  function rootOf(peerURL) {
    return String(peerURL).replace(/\/+$/, '').replace(/\/eureka(\/v[12])?$/, '') + '/';
  }

  function renderPeers() {
    const box = $('peers');
    clear(box);
    const st = state.status;
    if (!st) { box.append(el('p', { class: 'muted', text: state.statusError ? 'unavailable' : 'loading…' })); return; }
    const peers = asArray(st.peers);
    if (st.startupSync) box.append(el('p', { class: 'sync' }, 'start-up sync: ', el('span', { text: st.startupSync })));
    if (peers.length === 0) {
      box.append(el('p', { class: 'muted', text: 'No peers configured: this server runs standalone.' }));
      return;
    }
    const table = el('table', { class: 'peers' },
      el('thead', null, el('tr', null, ...['peer', 'health', 'since', 'queued', 'sent', 'last error'].map((h) => el('th', { text: h })))));
    const tbody = el('tbody');
    for (const p of peers) {
      const h = peerHealth(p);
      const badge = { self: ['st-self', 'this server'], reachable: ['st-up', 'reachable'], unreachable: ['st-down', 'unreachable'],
        unknown: ['st-unknown', 'no contact yet'] }[h];
      const health = el('span', { class: 'badge ' + badge[0], text: badge[1],
        title: h === 'unknown' ? 'nothing has been sent to this peer yet' : '' });
      tbody.append(el('tr', { dataset: { peer: p.url || '' } },
        el('td', { class: 'peer-url' }, safeLink(rootOf(p.url || ''), p.url || '')),
        el('td', null, health),
        el('td', { text: p.since ? ago(Date.parse(p.since)) : '' }),
        el('td', { class: 'num', text: count(p.queued) }),
        el('td', { class: 'num', text: count(p.sent) }),
        el('td', { class: 'err', text: p.lastError || '', title: p.lastError || '' })));
    }
    table.append(tbody);
    box.append(table);
  }

  function matches(v, f) {
    if (!f) return true;
    const hay = [v.app, v.id, v.host, v.rack, v.status, v.version, v.ha, v.admin].join(' ').toLowerCase();
    return f.split(/\s+/).every((w) => hay.includes(w));
  }

  function roleOf(app) {
    const m = /^HDFS-(DATANODE|NAMENODE)\.(.+)$/i.exec(app);
    if (!m) return '';
    return (m[1].toUpperCase() === 'DATANODE' ? 'DataNodes' : 'NameNodes') + ' of HDFS cluster ' + m[2].toLowerCase();
  }

  function fullness(v) {
    if (!Number.isFinite(v.percent)) return el('span', { class: 'muted', text: '—' });
    const pct = v.percent;
    const cls = pct >= FULL_PERCENT ? 'bar-full' : pct >= WARN_PERCENT ? 'bar-warn' : 'bar-ok';
    const fill = el('span', { class: 'bar-fill ' + cls });
    fill.style.width = pct.toFixed(1) + '%';
    return el('span', { class: 'fullness', title: bytes(v.used) + ' of ' + bytes(v.total) },
      el('span', { class: 'bar' }, fill), el('span', { class: 'pct', text: pct.toFixed(pct < 10 ? 1 : 0) + '%' }));
  }

  function renderApps() {
    const box = $('apps');
    clear(box);
    if (!state.loaded) { box.append(el('p', { class: 'muted', text: 'loading…' })); return; }
    if (state.apps.size === 0) {
      box.append(el('div', { class: 'card empty' },
        el('p', { text: 'No instances are registered.' }),
        el('p', { class: 'muted' }, 'Register one with any Eureka client, run ', el('code', { text: 'heureka agent' }),
          ' beside an HDFS daemon, or try ', el('code', { text: 'heureka demo' }), '.')));
      return;
    }
    const f = state.filter.trim().toLowerCase();
    const now = Date.now();
    let any = false;
    for (const name of [...state.apps.keys()].sort()) {
      const rows = [...state.apps.get(name).values()].filter((v) => matches(v, f))
        .sort((a, b) => (a.rack || '').localeCompare(b.rack || '') || a.id.localeCompare(b.id));
      if (rows.length === 0) continue;
      any = true;
      const all = [...state.apps.get(name).values()];
      const c = statusCounts(all);
      const chips = el('span', { class: 'chips' });
      for (const s of STATUS_ORDER) if (c[s]) chips.append(el('span', { class: 'chip st-' + s.toLowerCase(), text: c[s] + ' ' + s }));
      const isNN = /^HDFS-NAMENODE\./i.test(name);
      const head = ['instance', 'host', 'status', 'rack', 'fullness', 'blocks', 'version', isNN ? 'HA state' : 'admin', 'changed'];
      const table = el('table', { class: 'instances' },
        el('thead', null, el('tr', null, ...head.map((h) => el('th', { text: h })))));
      const tbody = el('tbody');
      for (const v of rows) {
        const key = v.app + '\u0000' + v.id;
        const freshAt = state.fresh.get(key);
        const fresh = freshAt && now - freshAt < FRESH_MS;
        if (freshAt && !fresh) state.fresh.delete(key);
        tbody.append(el('tr', { class: 'row st-row-' + v.status.toLowerCase() + (fresh ? ' fresh' : ''), dataset: { app: v.app, id: v.id, status: v.status } },
          el('td', { class: 'id', text: v.id, title: v.id }),
          el('td', { class: 'host', text: v.host }),
          el('td', { class: 'status' }, statusBadge(v.status)),
          el('td', { class: 'rack', text: v.rack }),
          el('td', { class: 'full' }, fullness(v)),
          el('td', { class: 'num', text: Number.isFinite(v.blocks) ? count(v.blocks) : '' }),
          el('td', { class: 'version', text: v.version, title: v.version }),
          el('td', { class: isNN && v.ha === 'active' ? 'ha-active' : '', text: isNN ? v.ha : (v.admin && v.admin !== 'NORMAL' ? v.admin : '') }),
          el('td', { class: 'changed muted', text: ago(v.changed), title: v.changed ? new Date(v.changed).toISOString() : '' })));
      }
      table.append(tbody);
      box.append(el('section', { class: 'card app', dataset: { app: name } },
        el('div', { class: 'app-head' },
          el('h3', { text: name }),
          roleOf(name) ? el('span', { class: 'role muted', text: roleOf(name) }) : null,
          chips),
        el('div', { class: 'table-wrap' }, table)));
    }
    if (!any) box.append(el('p', { class: 'muted', text: 'No instance matches the filter.' }));
  }

  // ---- start ------------------------------------------------------------

  function start() {
    const filter = $('filter');
    filter.addEventListener('input', () => { state.filter = filter.value; scheduleRender(); });
    const showMeta = $('show-metadata');
    showMeta.addEventListener('change', () => { state.showMetadata = showMeta.checked; scheduleRender(); });
    pollStatus();
    setInterval(pollStatus, STATUS_EVERY_MS);
    follow(true);
    render();
  }

  // Exposed for tests and the curious: read-only views of the page's state.
  window.heureka = Object.freeze({
    version: () => state.version,
    stream: () => state.streamState,
    instance: (app, id) => {
      const v = getInstance(String(app).toUpperCase(), id);
      return v ? { ...v } : null;
    },
  });

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
