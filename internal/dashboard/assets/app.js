// heureka dashboard. Plain JavaScript, no build step, no dependencies.
//
// Data flow: GET v1/dashboard/summary once → a compact model (per
// application, columns of id, host, status, rack, fullness) → the rack map
// and the tables; GET v1/events (EventSource) from the summary's version →
// each event changes the one row and the one cell it names, batched per
// animation frame; GET v1/status every few seconds → peers and
// self-preservation; GET eureka/apps/APP/ID → one instance's details, when
// asked. Everything from the server is untrusted: the page is built with
// createElement/textContent only; no string is ever parsed as markup.
'use strict';

(() => {
  const STATUS_EVERY_MS = 5000;
  const MAX_EVENTS = 200;
  const HISTORY = 100; // recent changes replayed into the feed on load
  const WARN_PERCENT = 75;
  const FRESH_MS = 4000; // how long a changed row stays highlighted
  const RECENT_MS = 5 * 60 * 1000; // a row changed this recently is a problem to look at
  const SMALL_APP = 50; // an application this small lists all its instances by default
  const LAZY_APPS = 10; // with more applications, only cards near the viewport redraw
  const ROW_PX = 30; // the height of a table row (style.css .instances tr)
  const TABLE_ROWS = 14; // rows a table shows before it scrolls
  const FRAME_BUDGET_MS = 8; // event work per animation frame
  const LIST_EVERY_MS = 200; // text redraws under a storm, at most
  const FEED_EVERY_MS = 1000; // feed redraws while catching up, at most
  const FEED_SHOWN = 60; // events the feed shows (it keeps MAX_EVENTS)
  const EVENT_TYPES = ['registered', 'status_changed', 'metadata_changed', 'cancelled', 'expired'];
  // Events about the registry itself: they change the status card.
  const NOTICE_TYPES = ['self_preservation_entered', 'self_preservation_left', 'peer_lost', 'peer_found'];
  const STATUS_ORDER = ['UP', 'DOWN', 'OUT_OF_SERVICE', 'STARTING', 'UNKNOWN'];

  const state = {
    apps: new Map(), // app name → app model (see newApp)
    facts: null, // the HDFS keys and limits, from the summary
    roles: new Map(), // role name → role (system, members, leads), from the summary
    roleStateKey: 'role_state', // the metadata key of a role state, from the summary
    version: 0, // registry version the model reflects
    node: '',
    loaded: false,
    status: null,
    statusError: '',
    streamState: 'connecting', // connecting | live | reconnecting | offline
    events: [], // newest first
    filter: '',
    showMetadata: false,
    colour: 'status', // the rack map's colouring: status | fullness
    queue: [], // events received, not yet applied
    catchingUp: false,
    selected: null, // the row whose details are open
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

  // breakable returns a span of text that may wrap only after a separator
  // ('.', '-', '/', ':', '@', '?', '&', '='), never inside a name: IDs,
  // host names and URLs stay readable in a narrow column.
  function breakable(cls, text) {
    const span = el('span', { class: cls });
    for (const part of String(text).split(/(?<=[./:@?&=-])/)) {
      if (span.firstChild) span.append(document.createElement('wbr'));
      span.append(part);
    }
    return span;
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

  // One formatter each: toLocale*String builds a new one on every call.
  const timeFormat = new Intl.DateTimeFormat([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });
  const numberFormat = new Intl.NumberFormat();

  function clock(ms) {
    const d = new Date(ms);
    return timeFormat.format(d);
  }

  function bytes(n) {
    if (!(n > 0)) return '';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
    let i = 0;
    while (n >= 1024 && i < units.length - 1) { n /= 1024; i++; }
    return (n >= 100 || i === 0 ? n.toFixed(0) : n.toFixed(1)) + ' ' + units[i];
  }

  function count(n) {
    return Number.isFinite(n) ? numberFormat.format(n) : '';
  }

  function statusBadge(status) {
    const s = String(status || 'UNKNOWN');
    return el('span', { class: 'badge st-' + s.toLowerCase().replace(/[^a-z_]/g, ''), text: s });
  }

  // ---- the registry model -----------------------------------------------
  //
  // An application is { name, role, cluster, rows: Map(id → row), order
  // (rows by rack, then ID), counts, racks: Map(name → rack) }. A row is
  // what a table row and a rack-map cell show. Work is per row: an event
  // touches its row, its cell and its rack's counts, and marks the
  // application for the next frame.

  const fullPercent = () => (state.facts ? state.facts.fullPercent : 90);

  function newApp(name, role, cluster) {
    return {
      name, role: role || '', cluster: cluster || '', rows: new Map(), order: [], counts: {},
      racks: new Map(), sorted: true, dirty: true, list: null, mode: '', table: null, card: null, map: null,
    };
  }

  function roleOf(name) {
    const f = state.facts;
    if (!f) return ['', ''];
    const up = name.toUpperCase();
    if (up.startsWith(f.dataNodePrefix)) return ['datanode', up.slice(f.dataNodePrefix.length).toLowerCase()];
    if (up.startsWith(f.nameNodePrefix)) return ['namenode', up.slice(f.nameNodePrefix.length).toLowerCase()];
    // Another system's role: ROLE.CLUSTER, a role the summary named.
    const dot = name.indexOf('.');
    const ro = dot > 0 && state.roles.get(name.slice(0, dot).toLowerCase());
    if (ro && ro.system !== 'HDFS') return [ro.name, name.slice(dot + 1).toLowerCase()];
    return ['', ''];
  }

  // roleOfApp is the role (as the summary's roles describe it) of an
  // application of a system other than HDFS, or null.
  function roleOfApp(a) {
    return a.role && a.role !== 'datanode' && a.role !== 'namenode' ? state.roles.get(a.role) || null : null;
  }

  // leads says whether row r leads its cluster: the active NameNode, the
  // active ResourceManager, the ZooKeeper leader, the Kafka controller...
  function leads(a, r) {
    if (a.role === 'namenode') return r.note === 'active';
    const ro = roleOfApp(a);
    return !!ro && (ro.leads || []).includes(r.note);
  }

  function getApp(name) {
    let a = state.apps.get(name);
    if (!a) {
      const [role, cluster] = roleOf(name);
      a = newApp(name, role, cluster);
      state.apps.set(name, a);
      structureChanged = true;
    }
    return a;
  }

  function intOf(v) {
    const n = Number(v);
    return Number.isFinite(n) && n >= 0 && String(v).trim() !== '' ? n : NaN;
  }

  // rowFields derives a row's shown fields from HDFS metadata, with the
  // keys the summary named.
  function fromMetadata(app, md) {
    const f = state.facts;
    md = md && typeof md === 'object' ? md : {};
    const used = intOf(md[f.usedKey]);
    const total = intOf(md[f.totalKey]);
    const admin = String(md[f.adminKey] || '').trim();
    let note = admin && admin !== f.normalAdmin ? admin : '';
    if (app.role === 'namenode') note = String(md[f.haKey] || '').trim().toLowerCase();
    else if (roleOfApp(app)) note = String(md[state.roleStateKey] || '').trim().toLowerCase();
    return {
      rack: String(md[f.rackKey] || '').trim() || f.defaultRack,
      full: total > 0 && used >= 0 ? Math.min(100, (used / total) * 100) : NaN,
      note,
    };
  }

  function makeRow(app, id, host, status, rack, full, note, changed) {
    const r = { app: app.name, id, host, status: String(status || 'UNKNOWN'), rack, full, note, changed, seen: 0, hay: '', rk: null, pos: 0, gone: false };
    r.hay = hayOf(r);
    return r;
  }

  function hayOf(r) {
    return (r.app + ' ' + r.id + ' ' + r.host + ' ' + r.rack + ' ' + r.status + ' ' + r.note).toLowerCase();
  }

  function rackOf(app, name) {
    let k = app.racks.get(name);
    if (!k) {
      k = { name, counts: {}, rows: [], sorted: true, el: null, canvas: null, ctx: null, cols: 0, label: null, dirty: true, redraw: true };
      app.racks.set(name, k);
      structureChanged = true;
    }
    return k;
  }

  function countIn(counts, status, d) {
    countsDirty = true;
    counts[status] = (counts[status] || 0) + d;
    if (counts[status] <= 0) delete counts[status];
  }

  // addRow puts a new row into its application and rack.
  function addRow(app, r) {
    app.rows.set(r.id, r);
    app.order.push(r);
    app.sorted = false;
    countIn(app.counts, r.status, 1);
    const k = rackOf(app, r.rack);
    k.rows.push(r);
    k.sorted = false;
    countIn(k.counts, r.status, 1);
    k.dirty = true;
    app.dirty = true;
  }

  function dropRow(app, r) {
    app.rows.delete(r.id);
    r.gone = true;
    app.removed = true;
    countIn(app.counts, r.status, -1);
    const k = app.racks.get(r.rack);
    if (k) {
      k.removed = true;
      k.redraw = true;
      countIn(k.counts, r.status, -1);
      k.dirty = true;
    }
    app.dirty = true;
    if (state.selected === r) state.selected = null;
  }

  function setStatus(app, r, status) {
    status = String(status || 'UNKNOWN');
    if (status === r.status) return;
    countIn(app.counts, r.status, -1);
    countIn(app.counts, status, 1);
    const k = app.racks.get(r.rack);
    if (k) {
      countIn(k.counts, r.status, -1);
      countIn(k.counts, status, 1);
      k.dirty = true;
    }
    r.status = status;
    r.hay = hayOf(r);
    paintCell(r);
    app.dirty = true;
  }

  // loadSummary reads the summary and replaces the model.
  async function loadSummary() {
    const { body, headers } = await getJSON('v1/dashboard/summary');
    state.facts = body.hdfs;
    state.roles = new Map((body.roles || []).map((r) => [String(r.name), r]));
    state.roleStateKey = String(body.roleStateKey || 'role_state');
    for (const a of state.apps.values()) removeAppDOM(a);
    state.apps = new Map();
    structureChanged = true;
    for (const s of body.apps || []) {
      const app = getApp(String(s.name));
      const racks = s.racks || [];
      for (let i = 0; i < s.id.length; i++) {
        const full = s.full[i] >= 0 ? s.full[i] / 10 : NaN;
        const r = makeRow(app, s.id[i], s.host[i], s.status[i], racks[s.rack[i]] || state.facts.defaultRack, full, s.note[i] || '', s.changed[i]);
        app.rows.set(r.id, r);
        app.order.push(r); // already by rack, then ID
        countIn(app.counts, r.status, 1);
        const k = rackOf(app, r.rack);
        k.rows.push(r);
        countIn(k.counts, r.status, 1);
      }
    }
    state.version = Number(body.version) || 0;
    state.node = headers.get('X-Heureka-Node') || state.node;
    state.loaded = true;
  }

  function byRackThenID(a, b) {
    return a.rack < b.rack ? -1 : a.rack > b.rack ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  }

  function byID(a, b) {
    return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  }

  // applyEvent updates the model from one event of v1/events. It returns
  // false when the event refers to an instance the model does not have,
  // which means the page missed something and must read the summary again.
  function applyEvent(type, ev) {
    const name = String(ev.app || '');
    const id = String(ev.id || '');
    const app = state.apps.get(name);
    const prev = app && app.rows.get(id);
    const now = Date.now();
    switch (type) {
      case 'registered': {
        const a = getApp(name);
        const m = fromMetadata(a, ev.metadata);
        if (prev && prev.rack === m.rack) {
          setStatus(a, prev, ev.status);
          Object.assign(prev, { host: String(ev.hostName || ''), full: m.full, note: m.note, changed: ev.time, seen: now });
          prev.hay = hayOf(prev);
          paintCell(prev);
        } else {
          if (prev) dropRow(a, prev);
          const r = makeRow(a, id, String(ev.hostName || ''), ev.status, m.rack, m.full, m.note, ev.time);
          r.seen = now;
          addRow(a, r);
        }
        break;
      }
      case 'status_changed':
        if (!prev) return false;
        setStatus(app, prev, ev.status);
        prev.changed = ev.time;
        prev.seen = now;
        break;
      case 'metadata_changed': {
        if (!prev) return false;
        const m = fromMetadata(app, ev.metadata);
        if (m.rack !== prev.rack) {
          dropRow(app, prev);
          const r = makeRow(app, id, prev.host, prev.status, m.rack, m.full, m.note, ev.time);
          r.seen = now;
          addRow(app, r);
        } else {
          Object.assign(prev, { full: m.full, note: m.note, changed: ev.time, seen: now });
          prev.hay = hayOf(prev);
          paintCell(prev);
          app.dirty = true;
        }
        break;
      }
      case 'cancelled':
      case 'expired':
        if (prev) dropRow(app, prev);
        break;
      default:
        return true;
    }
    return true;
  }

  // settle brings an application's orders up to date after a frame's
  // events: sorts what was appended, drops what was removed, and empties
  // out what has no rows left.
  function settle(app) {
    if (app.removed) { app.order = app.order.filter((r) => !r.gone); app.removed = false; }
    if (!app.sorted) { app.order.sort(byRackThenID); app.sorted = true; }
    for (const k of app.racks.values()) {
      if (k.removed) { k.rows = k.rows.filter((r) => !r.gone); k.removed = false; }
      if (!k.sorted) { k.rows.sort(byID); k.sorted = true; k.redraw = true; }
      if (k.rows.length === 0) {
        if (k.el) k.el.remove();
        app.racks.delete(k.name);
        structureChanged = true;
      }
    }
    if (app.rows.size === 0) {
      removeAppDOM(app);
      state.apps.delete(app.name);
      structureChanged = true;
    }
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

  function closeStream() {
    if (source) { source.close(); source = null; }
    state.queue = [];
  }

  // follow (re)reads the summary and opens the event stream from its
  // version. withHistory asks for the last HISTORY changes too: they fill
  // the feed but are already part of the summary, so they leave the model
  // alone.
  async function follow(withHistory) {
    clearTimeout(retryTimer);
    closeStream();
    setStream(state.loaded ? 'reconnecting' : 'connecting');
    try {
      await loadSummary();
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
    for (const type of NOTICE_TYPES.concat(EVENT_TYPES)) {
      es.addEventListener(type, (msg) => {
        if (source !== es) return;
        state.queue.push({ type, data: msg.data, seq: Number(msg.lastEventId) || 0 });
        scheduleFrame();
      });
    }
  }

  // drain applies queued events for at most FRAME_BUDGET_MS. What is left
  // waits for the next frame, and the page says it is catching up.
  function drain() {
    const q = state.queue;
    const until = performance.now() + FRAME_BUDGET_MS;
    let i = 0;
    let notice = false;
    for (; i < q.length; i++) {
      if ((i & 63) === 63 && performance.now() > until) break;
      const { type, data } = q[i];
      let ev;
      try { ev = JSON.parse(data); } catch (_) { continue; }
      const seq = q[i].seq || Number(ev.seq) || 0;
      addFeedEvent(type, ev);
      if (NOTICE_TYPES.includes(type)) {
        notice = true;
        if (seq > state.version) state.version = seq;
        continue;
      }
      if (seq > state.version || seq === 0) {
        if (!applyEvent(type, ev)) {
          addFeedNote('the page missed a change; reading the registry again');
          follow(false);
          return;
        }
        if (seq > state.version) state.version = seq;
      }
    }
    if (i > 0) statusDirty = true; // the header shows the version
    state.queue = i >= q.length ? [] : q.slice(i);
    if (state.catchingUp !== state.queue.length > 0 || state.catchingUp) statusDirty = true;
    state.catchingUp = state.queue.length > 0;
    if (notice) pollStatus();
    feedDirty = true;
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
    statusDirty = true;
    scheduleRender();
  }

  function setStream(s, why) {
    statusDirty = true;
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
    feedDirty = true;
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
      if (shown >= FEED_SHOWN) break;
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
          breakable('ev-id', ev.id || ev.peer || '')),
        el('span', { class: 'ev-detail', text: eventDetail(type, ev) })));
      shown++;
    }
    if (shown === 0) {
      list.append(el('li', { class: 'empty muted', text: 'No events yet. Changes appear here as they happen.' }));
    }
  }

  // ---- rendering ------------------------------------------------------------
  //
  // One frame does the queued events, then redraws only what they marked:
  // a rack's label, a table's visible rows, the tiles. A rAF callback does
  // not run in a hidden tab, so a timer stands in for it there.

  let framePending = false;
  let structureChanged = true; // an application or rack came or went
  let feedDirty = true;
  let listAt = 0; // when the tables were last redrawn
  let listNow = false; // redraw them in this frame, whatever the time
  let listTimer = 0;
  let feedAt = 0; // when the feed was last redrawn
  let statusDirty = true; // v1/status or the stream's state changed
  let countsDirty = true; // an instance came, went or changed status
  let filterAt = []; // timeStamps of the input events not yet answered
  const marks = { rackMap: 0, filterMs: [], frameMs: [] };

  function scheduleFrame() {
    if (framePending) return;
    framePending = true;
    let done = false;
    const run = () => {
      if (done) return;
      done = true;
      framePending = false;
      frame();
    };
    requestAnimationFrame(run);
    setTimeout(run, 250);
  }
  const scheduleRender = scheduleFrame;

  function frame() {
    const t0 = performance.now();
    if (state.queue.length) drain();
    for (const a of [...state.apps.values()]) if (a.dirty) settle(a);
    render();
    marks.frameMs.push(performance.now() - t0);
    if (marks.frameMs.length > 100) marks.frameMs.shift();
    if (state.queue.length) scheduleFrame();
    if (filterAt.length) {
      const asked = filterAt;
      filterAt = [];
      // The next frame's callback runs once this frame has been painted.
      requestAnimationFrame(() => {
        const now = performance.now();
        for (const t0 of asked) marks.filterMs.push(now - t0);
      });
    }
  }

  // render draws what changed. The rack map's squares are painted as
  // events arrive (paintCell) and canvases redrawn here; text (the header,
  // tiles, rack labels, tables, feed) costs layout, so under a storm it is
  // redrawn at most every LIST_EVERY_MS, and the feed at most every
  // FEED_EVERY_MS. A keystroke in the filter, a click or a new application
  // or rack redraws at once.
  function render() {
    for (const a of state.apps.values()) {
      if (a.dirty) { a.listDirty = true; a.fullDirty = true; a.roleDirty = true; }
      for (const k of a.racks.values()) if (k.dirty) k.labelDirty = true;
    }
    const now = performance.now();
    const text = listNow || structureChanged || now - listAt >= LIST_EVERY_MS;
    renderRackMaps(text);
    if (text) renderRoleClusters();
    for (const a of state.apps.values()) {
      a.dirty = false;
      for (const k of a.racks.values()) k.dirty = false;
    }
    if (text) {
      if (statusDirty) { renderHeader(); renderPreservation(); renderPeers(); }
      if (statusDirty || countsDirty) renderSummary();
      statusDirty = false;
      countsDirty = false;
      renderApps();
      if (feedDirty && (listNow || !state.catchingUp || now - feedAt >= FEED_EVERY_MS)) {
        renderEvents();
        feedDirty = false;
        feedAt = now;
      }
      listAt = now;
      listNow = false;
    }
    if ((!text || feedDirty || statusDirty || countsDirty) && !listTimer) {
      listTimer = setTimeout(() => { listTimer = 0; scheduleFrame(); }, LIST_EVERY_MS);
    }
    renderDetails();
    structureChanged = false;
  }

  function renderHeader() {
    const conn = $('conn');
    const labels = { connecting: 'connecting…', live: 'live', reconnecting: 'reconnecting…', offline: 'offline' };
    conn.className = 'conn conn-' + state.streamState;
    conn.textContent = labels[state.streamState] || state.streamState;
    conn.title = state.streamWhy || '';
    if (state.catchingUp && state.streamState === 'live') {
      conn.className = 'conn conn-catching';
      conn.textContent = 'catching up · ' + count(state.queue.length) + ' events';
    }

    const node = $('node');
    clear(node);
    const st = state.status;
    if (st) {
      node.append(el('span', null, 'node ', el('code', { text: st.node || state.node || '?' })),
        el('span', { class: 'sep' }, '·'),
        el('span', null, 'version ', el('code', { text: String(state.version) })),
        el('span', { class: 'sep' }, '·'),
        el('span', null, st.ready ? 'ready' : 'not ready'));
      if (st.dns) {
        // The DNS server (heureka server --dns-listen): its zone, address and queries answered.
        node.append(el('span', { class: 'sep' }, '·'),
          el('span', { class: 'dns', title: 'dig @HOST -p PORT APP.service.' + (st.dns.domain || '') },
            'DNS ', el('code', { text: String(st.dns.domain || '?') }), ' on ',
            el('code', { text: String(st.dns.listen || '?') }), ' · ' + count(st.dns.queries) + ' queries'));
      }
    }

    const banner = $('banner');
    const problems = [];
    if (state.statusError) problems.push('Cannot read v1/status: ' + state.statusError);
    if (state.streamState === 'offline' && state.streamWhy) problems.push(state.streamWhy);
    banner.hidden = problems.length === 0;
    banner.textContent = problems.join(' — ');
  }

  function totals() {
    const c = {};
    let n = 0;
    let full = 0;
    for (const a of state.apps.values()) {
      for (const [s, k] of Object.entries(a.counts)) { c[s] = (c[s] || 0) + k; n += k; }
      if (a.fullDirty !== false) a.full = countFull(a);
      full += a.full;
    }
    return { c, n, full };
  }

  function countFull(a) {
    const lim = fullPercent();
    let n = 0;
    for (const r of a.rows.values()) if (r.full > lim) n++;
    a.fullDirty = false;
    return n;
  }

  function renderSummary() {
    const box = $('summary');
    clear(box);
    const { c, n, full } = totals();
    const tile = (label, value, cls) => el('div', { class: 'tile ' + (cls || '') },
      el('div', { class: 'tile-value', text: value }), el('div', { class: 'tile-label', text: label }));
    box.append(tile('applications', count(state.apps.size)));
    box.append(tile('instances', count(n)));
    box.append(tile('up', count(c.UP || 0), 'tile-up'));
    box.append(tile('down', count(c.DOWN || 0), (c.DOWN || 0) > 0 ? 'tile-down' : ''));
    box.append(tile('out of service', count(c.OUT_OF_SERVICE || 0), (c.OUT_OF_SERVICE || 0) > 0 ? 'tile-oos' : ''));
    box.append(tile('over ' + fullPercent() + '% full', count(full), full > 0 ? 'tile-down' : ''));
    const sp = state.status && state.status.selfPreservation;
    box.append(tile('self-preservation', sp ? (sp.active ? 'PROTECTING' : (sp.mode === 'off' ? 'off' : 'idle')) : '…',
      sp && sp.active ? 'tile-down' : ''));
    const peers = (state.status && asArray(state.status.peers).filter((p) => !p.self)) || [];
    const reachable = peers.filter((p) => p.reachable).length;
    const lost = peers.filter((p) => peerHealth(p) === 'unreachable').length;
    box.append(tile('peers reachable', peers.length ? reachable + ' / ' + peers.length : 'none', lost > 0 ? 'tile-down' : ''));
  }

  function asArray(v) {
    if (Array.isArray(v)) return v;
    return v === undefined || v === null ? [] : [v];
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
    const expected = Number.isFinite(sp.expectedRenewsPerMinute) ? sp.expectedRenewsPerMinute.toFixed(1) : '?';
    // The count is of the last whole minute; before the first one has
    // passed it is 0 because nothing was measured yet.
    const renews = sp.renewsMeasured === false
      ? el('span', { title: 'renewals are counted per whole minute; the first one since this server started has not passed yet' },
        el('span', { class: 'muted', text: 'warming up (first minute)' }), ' / ' + expected)
      : count(sp.renewsLastMinute) + ' / ' + expected;
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

  // ---- the rack map -------------------------------------------------------
  //
  // One card per HDFS cluster: its NameNodes with their HA state on top,
  // then a row per rack: its name and counts, and a canvas with a small
  // square per DataNode, in ID order. A canvas, not an element per node:
  // 20,000 elements cost layout, style and paint on every change, while a
  // changed node here is one fillRect. Hover and click find the node from
  // the pointer's position.

  // The square and its pitch (square and gap) follow the cluster's size:
  // big enough to see and to point at for a few DataNodes, 7 px for
  // thousands. gridFor gives them for an application of n DataNodes.
  const GRIDS = [[64, 22, 26], [600, 12, 14], [Infinity, 7, 8]]; // up to n: cell, pitch (px)
  function gridFor(n) {
    const g = GRIDS.find((x) => n <= x[0]);
    return { cell: g[1], pitch: g[2] };
  }
  let colours = null; // fill per status and per fullness band, from style.css

  function readColours() {
    const css = getComputedStyle(document.documentElement);
    const v = (name, def) => css.getPropertyValue(name).trim() || def;
    colours = {
      UP: v('--up', '#1a7f37'), DOWN: v('--down', '#c62828'), OUT_OF_SERVICE: v('--oos', '#9a6700'),
      STARTING: v('--starting', '#0b5cad'), other: v('--unknown', '#57606a'),
      f0: v('--full-0', '#7ec8a0'), f1: v('--full-1', '#d8c75a'), f2: v('--full-2', '#f08c3a'), f3: v('--full-3', '#d62828'),
      fu: v('--unknown', '#57606a'),
    };
  }

  function fullBand(full) {
    if (!Number.isFinite(full)) return 'fu';
    if (full > fullPercent()) return 'f3';
    if (full >= WARN_PERCENT) return 'f2';
    if (full >= 50) return 'f1';
    return 'f0';
  }

  function cellClass(r) {
    return 'st-' + r.status.toLowerCase().replace(/[^a-z_]/g, '') + ' ' + fullBand(r.full);
  }

  function fillOf(r) {
    if (state.colour === 'fullness') return colours[fullBand(r.full)];
    return colours[r.status] || colours.other;
  }

  // paintCell redraws one node's square, if its rack is drawn.
  function paintCell(r) {
    const k = r.rk;
    if (!k || !k.ctx || k.rows[r.pos] !== r) return;
    const x = (r.pos % k.cols) * k.pitch;
    const y = Math.floor(r.pos / k.cols) * k.pitch;
    k.ctx.fillStyle = fillOf(r);
    k.ctx.fillRect(x, y, k.cell, k.cell);
  }

  // drawRack sizes a rack's canvas to its row's width and draws every node.
  function drawRack(k, width, grid) {
    const { cell, pitch } = grid;
    k.cell = cell;
    k.pitch = pitch;
    const cols = Math.max(1, Math.floor((width + pitch - cell) / pitch));
    const lines = Math.max(1, Math.ceil(k.rows.length / cols));
    const dpr = window.devicePixelRatio || 1;
    const w = cols * pitch;
    const h = lines * pitch;
    const c = k.canvas;
    if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
      c.width = Math.round(w * dpr);
      c.height = Math.round(h * dpr);
      c.style.width = w + 'px';
      c.style.height = h + 'px';
      k.ctx = c.getContext('2d', { alpha: true });
    }
    k.ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    k.ctx.clearRect(0, 0, w, h);
    k.cols = cols;
    for (let i = 0; i < k.rows.length; i++) {
      const r = k.rows[i];
      r.rk = k;
      r.pos = i;
      k.ctx.fillStyle = fillOf(r);
      k.ctx.fillRect((i % cols) * pitch, Math.floor(i / cols) * pitch, cell, cell);
    }
    k.redraw = false;
    k.drawnColour = state.colour;
  }

  function countsText(counts) {
    const parts = [];
    for (const s of STATUS_ORDER) if (counts[s]) parts.push(count(counts[s]) + ' ' + s);
    for (const [s, n] of Object.entries(counts)) if (!STATUS_ORDER.includes(s)) parts.push(count(n) + ' ' + s);
    return parts.join(' · ');
  }

  function dataNodeApps() {
    return [...state.apps.values()].filter((a) => a.role === 'datanode').sort((x, y) => (x.name < y.name ? -1 : 1));
  }

  let mapWidth = 0; // the width the canvases were drawn for

  function renderRackMaps(text) {
    const box = $('racks');
    const dns = dataNodeApps();
    box.hidden = dns.length === 0;
    if (dns.length === 0) return;
    if (!colours) readColours();
    box.classList.toggle('by-full', state.colour === 'fullness');
    const maps = $('maps');
    if (structureChanged) {
      for (const a of dns) {
        if (!a.map) a.map = buildMapCard(a);
        maps.append(a.map.card); // in name order; moving an element is cheap
      }
    }
    for (const a of dns) {
      const m = a.map;
      renderNameNodes(a, m.nn);
      const grid = gridFor(a.rows.size);
      const redrawAll = structureChanged || mapWidth !== m.width || state.colour !== m.colour || grid.pitch !== m.pitch;
      if (!a.dirty && !redrawAll && !(text && a.labelDirty)) continue;
      if (text) { m.counts.textContent = countsText(a.counts); a.labelDirty = false; } else if (a.dirty) a.labelDirty = true;
      const racks = [...a.racks.values()].sort((x, y) => (x.name < y.name ? -1 : 1));
      if (structureChanged) {
        for (const k of racks) if (!k.el) buildRack(k);
        m.racks.append(...racks.map((k) => k.el));
      }
      if (!mapWidth) mapWidth = cellsWidth(m);
      for (const k of racks) {
        if (!k.el) { buildRack(k); m.racks.append(k.el); }
        if (k.redraw || redrawAll) drawRack(k, mapWidth, grid);
        if (text && (k.labelDirty || redrawAll)) {
          k.labelDirty = false;
          k.label.textContent = countsText(k.counts);
          const bad = k.rows.length - (k.counts.UP || 0);
          k.el.classList.toggle('rack-bad', bad > 0);
          k.el.classList.toggle('rack-half', bad * 2 >= k.rows.length);
        }
      }
      m.width = mapWidth;
      m.colour = state.colour;
      m.pitch = grid.pitch;
    }
    if (!marks.rackMap && state.loaded) {
      requestAnimationFrame(() => {
        if (marks.rackMap) return;
        performance.mark('heureka-rackmap');
        marks.rackMap = performance.now();
      });
    }
  }

  // cellsWidth is the width a rack's canvas may take. It reads layout, so
  // it runs only when the window's size changed or on the first draw.
  function cellsWidth(m) {
    const probe = m.racks.querySelector('.cells');
    const w = probe ? probe.clientWidth : m.racks.clientWidth - 160;
    return Math.max(64, w);
  }

  function buildMapCard(a) {
    const nn = el('div', { class: 'nn-pair' });
    const counts = el('span', { class: 'chips-text muted' });
    const racks = el('div', { class: 'rack-rows' });
    const card = el('section', { class: 'card cluster', dataset: { app: a.name, cluster: a.cluster } },
      el('div', { class: 'cluster-head' },
        el('h3', { text: 'HDFS cluster ' + a.cluster }),
        el('span', { class: 'muted', text: a.name }), counts),
      nn, racks);
    return { card, nn, counts, racks, width: 0, colour: '' };
  }

  function buildRack(k) {
    k.label = el('span', { class: 'rack-counts muted' });
    k.canvas = el('canvas', { class: 'cells-canvas', 'aria-label': 'DataNodes of rack ' + k.name, role: 'img' });
    k.canvas.heurekaRack = k;
    k.el = el('div', { class: 'rack', dataset: { rack: k.name } },
      el('div', { class: 'rack-head' }, el('span', { class: 'rack-name', text: k.name }), k.label),
      el('div', { class: 'cells' }, k.canvas));
    k.redraw = true;
  }

  // rowAt finds the node under a pointer event on a rack's canvas.
  function rowAt(e) {
    const k = e.target && e.target.heurekaRack;
    if (!k || !k.cols) return null;
    const x = Math.floor(e.offsetX / k.pitch);
    const y = Math.floor(e.offsetY / k.pitch);
    if (x >= k.cols || e.offsetX % k.pitch >= k.cell + 0.5 || e.offsetY % k.pitch >= k.cell + 0.5) return null;
    const r = k.rows[y * k.cols + x];
    return r && !r.gone ? r : null;
  }

  function renderNameNodes(dn, box) {
    const nnApp = [...state.apps.values()].find((a) => a.role === 'namenode' && a.cluster === dn.cluster);
    if (!nnApp) {
      if (box.dataset.empty !== 'yes') { clear(box); box.dataset.empty = 'yes'; box.append(el('span', { class: 'muted', text: 'no NameNode registered' })); }
      return;
    }
    if (!nnApp.dirty && !structureChanged && box.dataset.empty === 'no') return;
    box.dataset.empty = 'no';
    clear(box);
    box.append(el('span', { class: 'nn-label muted', text: 'NameNodes' }));
    for (const r of [...nnApp.rows.values()].sort(byID)) {
      const ha = r.note || 'no HA state';
      box.append(el('button', { type: 'button', class: 'nn ha-' + ha.replace(/[^a-z]/g, '') + ' st-row-' + r.status.toLowerCase(), dataset: { id: r.id } },
        el('span', { class: 'nn-host', text: r.host || r.id }), statusBadge(r.status), el('span', { class: 'nn-ha', text: ha })));
    }
  }

  // ---- the other systems' clusters ---------------------------------------
  //
  // One card per cluster of a system other than HDFS (YARN, HBase,
  // Elasticsearch, ZooKeeper, Kafka): each of its roles' members by rack,
  // as buttons showing host, status and role state, the one that leads
  // marked. These clusters are small, so a card is rebuilt whole when one
  // of its applications changed, with the other text (at most every
  // LIST_EVERY_MS under a storm); past MEMBERS_SHOWN members an
  // application's table lists the rest.

  const MEMBERS_SHOWN = 200;

  function renderRoleClusters() {
    const box = $('systems');
    const apps = [...state.apps.values()].filter(roleOfApp);
    box.hidden = apps.length === 0;
    if (apps.length === 0 || (!structureChanged && !apps.some((a) => a.roleDirty))) return;
    for (const a of apps) a.roleDirty = false;
    const order = [...state.roles.keys()];
    apps.sort((x, y) => (x.cluster < y.cluster ? -1 : x.cluster > y.cluster ? 1 : order.indexOf(x.role) - order.indexOf(y.role)));
    const list = $('role-clusters');
    clear(list);
    let card = null;
    let key = '';
    for (const a of apps) {
      const ro = roleOfApp(a);
      if (a.cluster + '\n' + ro.system !== key) {
        key = a.cluster + '\n' + ro.system;
        card = el('section', { class: 'card cluster role-cluster', dataset: { cluster: a.cluster, system: ro.system } },
          el('div', { class: 'cluster-head' }, el('h3', { text: ro.system + ' cluster ' + a.cluster })));
        list.append(card);
      }
      card.append(buildRoleBlock(a, ro));
    }
  }

  function buildRoleBlock(a, ro) {
    const block = el('div', { class: 'role-block', dataset: { app: a.name } },
      el('div', { class: 'role-head' },
        el('span', { class: 'role-name', text: ro.members }),
        el('span', { class: 'muted', text: a.name }),
        el('span', { class: 'chips-text muted', text: countsText(a.counts) })));
    const rows = [...a.rows.values()].sort(byRackThenID);
    let rack = null;
    let members = null;
    for (const [i, r] of rows.entries()) {
      if (i === MEMBERS_SHOWN) {
        block.append(el('p', { class: 'muted', text: count(rows.length - i) + ' more in the table of ' + a.name }));
        break;
      }
      if (r.rack !== rack) {
        rack = r.rack;
        members = el('div', { class: 'members' });
        block.append(el('div', { class: 'rack', dataset: { rack } },
          el('div', { class: 'rack-head' }, el('span', { class: 'rack-name', text: rack })), members));
      }
      const lead = leads(a, r);
      members.append(el('button', {
        type: 'button', class: 'nn member st-row-' + r.status.toLowerCase() + (lead ? ' lead' : ''),
        dataset: { app: a.name, id: r.id }, title: ro.member + (lead ? ', leading its cluster' : ''),
      }, el('span', { class: 'nn-host', text: r.host || r.id }), statusBadge(r.status),
      el('span', { class: 'nn-ha', text: (lead ? '★ ' : '') + (r.note || 'no role state') })));
    }
    return block;
  }

  // The hover card: one element, moved and refilled.
  function onMapMove(e) {
    const r = rowAt(e);
    const tip = $('tip');
    e.target.style.cursor = r ? 'pointer' : '';
    if (!r) { tip.hidden = true; return; }
    clear(tip);
    tip.append(el('div', { class: 'tip-id', text: r.id }),
      el('div', null, statusBadge(r.status), ' ', el('span', { text: r.host })),
      el('div', { class: 'muted', text: r.rack + (Number.isFinite(r.full) ? ' · ' + r.full.toFixed(0) + '% full' : '') + (r.note ? ' · ' + r.note : '') }));
    tip.hidden = false;
    tip.style.left = Math.min(window.innerWidth - 320, e.pageX + 12) + 'px';
    tip.style.top = (e.pageY + 14) + 'px';
  }

  // ---- the tables -----------------------------------------------------------
  //
  // Per application: its status counts, and a table of its problem rows
  // (not UP, over the fullness threshold, or changed in the last few
  // minutes, worst first) or of all its rows. A table is virtual: it holds
  // the rows in its scroll window and two spacers, so 20,000 rows cost two
  // dozen <tr>.

  function matches(r, words) {
    for (const w of words) if (!r.hay.includes(w)) return false;
    return true;
  }

  function isProblem(r, now) {
    return r.status !== 'UP' || r.full > fullPercent() || now - r.seen < RECENT_MS;
  }

  function modeOf(a) {
    if (state.filter.trim()) return 'all';
    return a.mode || (a.rows.size <= SMALL_APP ? 'all' : 'problems');
  }

  function computeList(a, now) {
    const words = state.filter.trim().toLowerCase().split(/\s+/).filter(Boolean);
    const mode = modeOf(a);
    // Problems come worst first: not UP, then over the threshold, then
    // only changed lately; all rows stay in rack and ID order.
    const out = [];
    const full = [];
    const recent = [];
    let problems = 0;
    for (const r of a.order) {
      if (r.gone) continue;
      const p = isProblem(r, now);
      if (p) problems++;
      if (!(mode === 'all' || p) || !matches(r, words)) continue;
      if (mode === 'all' || r.status !== 'UP') out.push(r);
      else if (r.full > fullPercent()) full.push(r);
      else recent.push(r);
    }
    a.list = full.length || recent.length ? out.concat(full, recent) : out;
    a.problems = problems;
  }

  // cardObserver tells which application cards are near the viewport.
  const cardObserver = new IntersectionObserver((entries) => {
    let any = false;
    for (const e of entries) {
      const a = e.target.heurekaApp;
      if (!a) continue;
      a.visible = e.isIntersecting;
      if (a.visible && a.stale) any = true;
    }
    if (any) { listNow = true; scheduleFrame(); }
  }, { rootMargin: '400px 0px' });

  function buildAppCard(a) {
    const chips = el('span', { class: 'chips' });
    const tabs = el('span', { class: 'tabs' });
    const tbody = el('tbody');
    const ro = roleOfApp(a);
    const head = ['instance', 'host', 'status', 'rack', 'fullness', a.role === 'namenode' ? 'HA state' : ro ? 'role state' : 'admin', 'changed'];
    const table = el('table', { class: 'instances' }, el('thead', null, el('tr', null, ...head.map((h) => el('th', { text: h })))), tbody);
    const wrap = el('div', { class: 'table-wrap vt' }, table);
    const note = el('p', { class: 'list-note muted' });
    let role = a.role ? (a.role === 'datanode' ? 'DataNodes' : 'NameNodes') + ' of HDFS cluster ' + a.cluster : '';
    if (ro) role = ro.members + ' of ' + ro.system + ' cluster ' + a.cluster;
    const card = el('section', { class: 'card app', dataset: { app: a.name } },
      el('div', { class: 'app-head' }, el('h3', { text: a.name }), role ? el('span', { class: 'role muted', text: role }) : null, chips, tabs),
      wrap, note);
    // The offset is read here, where layout is fresh: reading it in a frame
    // after the DOM changed would lay out the whole page, rack map included.
    cardObserver.observe(card);
    card.heurekaApp = a;
    wrap.addEventListener('scroll', () => { a.top = wrap.scrollTop; a.scrolled = true; listNow = true; scheduleFrame(); }, { passive: true });
    tbody.addEventListener('click', (e) => {
      const tr = e.target.closest('tr[data-id]');
      if (tr) select(a.rows.get(tr.dataset.id));
    });
    return { card, chips, tabs, tbody, wrap, note, shown: null };
  }

  function renderApps() {
    const box = $('apps');
    if (!state.loaded) return;
    const loading = $('apps-loading');
    if (loading) loading.remove();
    const empty = $('apps-empty');
    empty.hidden = state.apps.size > 0;
    const now = Date.now();
    const names = [...state.apps.keys()].sort();
    let any = false;
    // With many applications, only the cards near the viewport redraw
    // their rows; the others are brought up to date when they scroll in.
    const lazy = state.apps.size > LAZY_APPS;
    for (const name of names) {
      const a = state.apps.get(name);
      if (!a.table) { a.table = buildAppCard(a); structureChanged = true; }
      const t = a.table;
      if (a.listDirty || !a.list) {
        a.listDirty = false;
        computeList(a, now);
        a.stale = true;
      }
      const hidden = a.list.length === 0 && state.filter.trim() !== '';
      if (t.card.hidden !== hidden) t.card.hidden = hidden;
      if (!hidden) any = true;
      if (lazy && !a.visible && t.drawn) continue;
      if (a.stale) { renderChips(a); a.scrolled = true; a.stale = false; }
      if (a.scrolled) renderWindow(a, now);
      a.scrolled = false;
      t.drawn = true;
    }
    if (structureChanged) for (const name of names) box.append(state.apps.get(name).table.card);
    $('apps-nomatch').hidden = any || state.apps.size === 0;
  }

  function renderChips(a) {
    const t = a.table;
    const key = JSON.stringify([a.counts, modeOf(a), a.problems, a.rows.size, a.list.length, state.filter.trim()]);
    if (t.chipsKey === key) return;
    t.chipsKey = key;
    clear(t.chips);
    for (const s of STATUS_ORDER) if (a.counts[s]) t.chips.append(el('span', { class: 'chip st-' + s.toLowerCase(), text: count(a.counts[s]) + ' ' + s }));
    clear(t.tabs);
    const mode = modeOf(a);
    const tab = (m, label) => {
      const b = el('button', { type: 'button', class: 'tab' + (mode === m ? ' on' : ''), dataset: { mode: m }, text: label });
      b.disabled = state.filter.trim() !== '';
      b.addEventListener('click', () => { a.mode = m; a.listDirty = true; listNow = true; scheduleFrame(); });
      return b;
    };
    t.tabs.append(tab('problems', 'problems ' + count(a.problems)), tab('all', 'all ' + count(a.rows.size)));
    const words = state.filter.trim();
    t.note.textContent = words ? count(a.list.length) + ' of ' + count(a.rows.size) + ' match the filter'
      : mode === 'problems' && a.list.length === 0 ? 'No problem: every instance is UP, under ' + fullPercent() + '% full and unchanged for ' + (RECENT_MS / 60000) + ' minutes.' : '';
  }

  // renderWindow puts the rows of the table's scroll window in its tbody.
  function renderWindow(a, now) {
    const t = a.table;
    const list = a.list;
    const height = Math.min(list.length, TABLE_ROWS) * ROW_PX;
    t.wrap.style.maxHeight = (height + ROW_PX + 2) + 'px';
    const top = Math.min(a.top || 0, Math.max(0, list.length - TABLE_ROWS) * ROW_PX);
    const first = Math.max(0, Math.floor(top / ROW_PX) - 4);
    const last = Math.min(list.length, first + TABLE_ROWS + 8);
    const frag = document.createDocumentFragment();
    if (first > 0) frag.append(spacer(first * ROW_PX));
    for (let i = first; i < last; i++) frag.append(rowEl(a, list[i], now));
    if (last < list.length) frag.append(spacer((list.length - last) * ROW_PX));
    clear(t.tbody);
    t.tbody.append(frag);
  }

  function spacer(px) {
    const tr = el('tr', { class: 'spacer', 'aria-hidden': 'true' }, el('td', { colspan: '7' }));
    tr.style.height = px + 'px';
    return tr;
  }

  function fullness(r) {
    if (!Number.isFinite(r.full)) return el('span', { class: 'muted', text: '—' });
    const pct = r.full;
    const cls = pct > fullPercent() ? 'bar-full' : pct >= WARN_PERCENT ? 'bar-warn' : 'bar-ok';
    const fill = el('span', { class: 'bar-fill ' + cls });
    fill.style.width = pct.toFixed(1) + '%';
    return el('span', { class: 'fullness' },
      el('span', { class: 'bar' }, fill), el('span', { class: 'pct', text: pct.toFixed(pct < 10 ? 1 : 0) + '%' }));
  }

  function rowEl(a, r, now) {
    const fresh = r.seen && now - r.seen < FRESH_MS;
    return el('tr', { class: 'row st-row-' + r.status.toLowerCase() + (fresh ? ' fresh' : '') + (state.selected === r ? ' selected' : ''), dataset: { app: r.app, id: r.id, status: r.status } },
      el('td', { class: 'id', text: r.id, title: r.id }),
      el('td', { class: 'host', text: r.host }),
      el('td', { class: 'status' }, statusBadge(r.status)),
      el('td', { class: 'rack', text: r.rack }),
      el('td', { class: 'full' }, fullness(r)),
      el('td', { class: leads(a, r) ? 'note ha-active' : 'note', text: r.note }),
      el('td', { class: 'changed muted', text: ago(r.changed), title: r.changed ? new Date(r.changed).toISOString() : '' }));
  }

  function removeAppDOM(a) {
    if (a.table) { cardObserver.unobserve(a.table.card); a.table.card.remove(); }
    if (a.map) a.map.card.remove();
    a.table = null;
    a.map = null;
    for (const r of a.rows.values()) r.rk = null;
  }

  // ---- details on demand ----------------------------------------------------

  let detailsFor = null; // the row the details panel was last filled for
  let detailsBody = null; // its Eureka record, once read

  function select(r) {
    if (!r) return;
    state.selected = r;
    detailsBody = null;
    const want = r;
    getJSON('eureka/apps/' + encodeURIComponent(r.app) + '/' + encodeURIComponent(r.id))
      .then(({ body }) => { if (state.selected === want) { detailsBody = body.instance || body; detailsFor = null; scheduleFrame(); } })
      .catch((err) => { if (state.selected === want) { detailsBody = { error: err.message }; detailsFor = null; scheduleFrame(); } });
    for (const a of state.apps.values()) a.scrolled = true;
    listNow = true;
    detailsFor = null;
    scheduleFrame();
  }

  function renderDetails() {
    const box = $('details');
    const r = state.selected;
    box.hidden = !r;
    if (!r || detailsFor === r) return;
    detailsFor = r;
    clear(box);
    const close = el('button', { type: 'button', class: 'close', text: '×', 'aria-label': 'close' });
    close.addEventListener('click', () => { state.selected = null; for (const a of state.apps.values()) a.scrolled = true; listNow = true; scheduleFrame(); });
    box.append(el('div', { class: 'details-head' }, el('h3', { text: r.id }), close));
    const x = detailsBody;
    if (!x) { box.append(el('p', { class: 'muted', text: 'reading ' + r.app + '/' + r.id + '…' })); return; }
    if (x.error) { box.append(el('p', { class: 'err', text: x.error })); return; }
    const port = x.port && x.port.$ !== undefined ? String(x.port.$) : '';
    box.append(kv([
      ['app', r.app], ['status', statusBadge(x.status)], ['host', String(x.hostName || '')], ['address', String(x.ipAddr || '') + (port ? ':' + port : '')],
      ['rack', r.rack], ['fullness', fullness(r)], ['VIP', String(x.vipAddress || '')],
      ['changed', x.lastUpdatedTimestamp ? new Date(Number(x.lastUpdatedTimestamp)).toISOString() : ''],
    ]));
    const md = x.metadata && typeof x.metadata === 'object' ? x.metadata : {};
    const rows = Object.entries(md).filter(([k]) => k !== '@class').sort();
    if (rows.length) {
      box.append(el('h4', { text: 'metadata' }), kv(rows.map(([k, v]) => [k, el('code', { text: String(v) })])));
    }
  }

  // ---- start ------------------------------------------------------------

  function start() {
    const filter = $('filter');
    filter.addEventListener('input', (e) => {
      state.filter = filter.value;
      filterAt.push(e.timeStamp || performance.now());
      for (const a of state.apps.values()) a.listDirty = true;
      listNow = true;
      scheduleFrame();
    });
    const showMeta = $('show-metadata');
    showMeta.addEventListener('change', () => { state.showMetadata = showMeta.checked; feedDirty = true; scheduleFrame(); });
    for (const input of document.querySelectorAll('input[name=colour]')) {
      input.addEventListener('change', () => { if (input.checked) { state.colour = input.value; scheduleFrame(); } });
    }
    const maps = $('maps');
    maps.addEventListener('mousemove', onMapMove);
    maps.addEventListener('mouseleave', () => { $('tip').hidden = true; });
    maps.addEventListener('click', (e) => {
      const r = rowAt(e);
      if (r) { select(r); return; }
      const nn = e.target.closest('button.nn');
      if (!nn) return;
      for (const a of state.apps.values()) if (a.role === 'namenode' && a.rows.has(nn.dataset.id)) select(a.rows.get(nn.dataset.id));
    });
    $('role-clusters').addEventListener('click', (e) => {
      const b = e.target.closest('button.member');
      const a = b && state.apps.get(b.dataset.app);
      if (a && a.rows.has(b.dataset.id)) select(a.rows.get(b.dataset.id));
    });
    // A new width re-flows the canvases, once the resizing settles.
    let resizeTimer = 0;
    window.addEventListener('resize', () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => { mapWidth = 0; scheduleFrame(); }, 150);
    });
    pollStatus();
    setInterval(pollStatus, STATUS_EVERY_MS);
    // Ages and the "recently changed" problems move with the clock.
    setInterval(() => { for (const a of state.apps.values()) a.listDirty = true; scheduleFrame(); }, 2000);
    follow(true);
    render();
  }

  // Exposed for tests and the curious: read-only views of the page's state.
  window.heureka = Object.freeze({
    version: () => state.version,
    stream: () => state.streamState,
    catchingUp: () => state.catchingUp,
    pending: () => state.queue.length,
    instance: (app, id) => {
      const a = state.apps.get(String(app).toUpperCase());
      const r = a && a.rows.get(id);
      return r ? { app: r.app, id: r.id, host: r.host, status: r.status, rack: r.rack, full: r.full, note: r.note } : null;
    },
    // member reports what the other systems' section shows for a member:
    // its rack row, status, role-state text and whether it is marked as
    // leading; null when it is not shown.
    member: (app, id) => {
      for (const b of document.querySelectorAll('#role-clusters button.member')) {
        if (b.dataset.app !== String(app).toUpperCase() || b.dataset.id !== id) continue;
        const card = b.closest('.role-cluster');
        return {
          cluster: card.querySelector('h3').textContent, rack: b.closest('.rack').dataset.rack,
          status: b.querySelector('.badge').textContent, state: b.querySelector('.nn-ha').textContent, lead: b.classList.contains('lead'),
        };
      }
      return null;
    },
    // cell reports what the rack map shows for a DataNode: its status and
    // fullness band ("st-down f1") and the colour of the centre pixel of
    // its square on the canvas ("rgb(198,40,40)"); null when it has none.
    cell: (app, id) => {
      const a = state.apps.get(String(app).toUpperCase());
      const r = a && a.rows.get(id);
      const k = r && r.rk;
      if (!k || !k.ctx || !k.el.isConnected || k.rows[r.pos] !== r) return null;
      const dpr = window.devicePixelRatio || 1;
      const x = ((r.pos % k.cols) * k.pitch + k.cell / 2) * dpr;
      const y = (Math.floor(r.pos / k.cols) * k.pitch + k.cell / 2) * dpr;
      const px = k.ctx.getImageData(Math.floor(x), Math.floor(y), 1, 1).data;
      return { class: cellClass(r), pixel: 'rgb(' + px[0] + ',' + px[1] + ',' + px[2] + ')' };
    },
    // colour is the fill the map uses for a status or fullness band, as
    // the canvas reports it.
    colour: (name) => {
      if (!colours) readColours();
      const c = document.createElement('canvas').getContext('2d');
      c.fillStyle = colours[name] || colours.other;
      c.fillRect(0, 0, 1, 1);
      const px = c.getImageData(0, 0, 1, 1).data;
      return 'rgb(' + px[0] + ',' + px[1] + ',' + px[2] + ')';
    },
    timing: () => ({ rackMap: marks.rackMap, filterMs: marks.filterMs.slice(), frameMs: marks.frameMs.slice() }),
  });

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
