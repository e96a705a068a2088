// Rota's dashboard: plain JavaScript, no build step, no libraries. Every member streams its own view as
// server-sent events (/dashboard/events, 4 per second); this page opens one stream per member and merges
// them. A member whose stream goes quiet for STALE_MS is shown as not answering (down or paused).
'use strict';

const STALE_MS = 1500;
const LOG_WIDTH = 40;          // entries shown per member, as the server sends (Dashboard.LOG_TAIL)
const MAX_EVENTS = 300;        // timeline lines kept in the page
const KIND_LETTER = {
  'no-op': '·', put: 'P', delete_range: 'D', txn: 'T', lease_grant: 'G', lease_revoke: 'R',
  lease_keep_alive: 'K', lease_checkpoint: 'C', lease_expire: 'X', register_session: 'S',
  session_keep_alive: 'S', publish_member: 'M'
};
const LAB_HINTS = {
  kill: n => `Killed ${n} (kill -9). If it led: its sockets closed and its port now refuses connections, so the followers know its process is gone and do not wait out the election timeout — one becomes a pre-candidate within a tick or two, then a candidate in a new term, and wins. Watch the timeline, the term colour change in the log, and the new leader's no-op (·).`,
  pause: n => `Paused ${n} (SIGSTOP): it is frozen but its sockets stay open, so nobody can tell it from a slow member. If it led, the followers wait out the election timeout (1–2 s) and elect a new leader; when you resume it, it learns the higher term and steps down. A paused lock holder keeps believing it holds the lock — fencing is what stops its late writes.`,
  resume: n => `Resumed ${n} (SIGCONT). It answers again; a stale leader sees the higher term and becomes a follower, and its log is repaired to match the leader's (§5.3).`,
  restart: n => `Restarted ${n}: it reloads its term, vote and log from disk (persistent state, Figure 2) and catches up from the leader. Watch its last/commit indexes climb.`,
  partition: n => `Partitioned ${n} away: its Raft messages are dropped both ways. It keeps its term — PreVote (§9.6) stops it from raising terms while cut off — and the majority carries on. If it led, the others elect a new leader; with CheckQuorum it steps down.`,
  heal: n => `Healed ${n}: messages flow again; it rejoins as a follower and its log catches up. Thanks to PreVote it does not disrupt the leader.`,
  transfer: n => `Leadership transfer to ${n} (§3.10): the leader brings ${n} up to date, then tells it to start an election at once (TimeoutNow). Watch the term go up by one with no gap.`
};

const members = new Map();     // id -> {id, name, http, data, seen, streams, answering}
const events = new Map();      // "id:seq:time" -> event (server) or "page:n" (seen by this page)
let pageSeq = 0;
let selfName = '';
let labOn = false;

// ---------------------------------------------------------------- wiring

async function start() {
  const me = await getJson('/dashboard/state').catch(() => null);
  if (!me) {
    document.getElementById('feed').textContent = 'this member does not answer /dashboard/state';
    setTimeout(start, 2000);
    return;
  }
  selfName = me.name;
  labOn = me.lab;
  document.getElementById('lab-banner').hidden = !labOn;
  learnMembers(me, true);
  accept(me.id, me, false);
  setInterval(render, 250);
  setInterval(refreshMembers, 3000);   // addresses of members that publish later
}

function learnMembers(state, fromSelf) {
  for (const m of state.members) {
    let member = members.get(m.id);
    if (!member) {
      member = { id: m.id, name: m.name, http: null, data: null, seen: 0, stream: null, answering: false };
      members.set(m.id, member);
    }
    if (m.http && !member.http) {
      member.http = m.id === state.id && fromSelf ? '' : httpBase(m.http);
      openStream(member);
      if (member.http) {
        getJson(member.http + '/dashboard/state').then(s => accept(m.id, s, false)).catch(() => {});
      }
    }
  }
}

// "0.0.0.0:7201" (any address) is reached at the host this page came from.
function httpBase(address) {
  const colon = address.lastIndexOf(':');
  let host = address.substring(0, colon);
  if (host === '0.0.0.0' || host === '::' || host === '') host = location.hostname;
  return 'http://' + host + ':' + address.substring(colon + 1);
}

function openStream(member) {
  const source = new EventSource(member.http + '/dashboard/events');
  source.onmessage = msg => accept(member.id, JSON.parse(msg.data), true);
  member.stream = source;   // EventSource reconnects by itself (the server asks for 1 s)
}

async function refreshMembers() {
  for (const m of members.values()) {
    if (m.answering && m.data) { learnMembers(m.data, m.http === ''); }
  }
}

function accept(id, state, live) {
  const m = members.get(id);
  if (!m) return;
  m.data = state;
  m.seen = Date.now();
  for (const e of state.events) {
    // seq starts again at 1 when a member restarts: its time tells the two lives apart.
    events.set(id + ':' + e.seq + ':' + e.t, Object.assign({ member: id }, e));
  }
  if (live && state.members.some(x => x.http && !(members.get(x.id) || {}).http)) learnMembers(state, m.http === '');
}

function getJson(url) {
  return fetch(url, { cache: 'no-store' }).then(r => { if (!r.ok) throw new Error(r.status); return r.json(); });
}

// ---------------------------------------------------------------- the model

function answering(m) { return m.data && Date.now() - m.seen < STALE_MS; }

// The leader: a member that answers and says it leads; of several (a stale one cut off), the highest term.
function leader() {
  let best = null;
  for (const m of members.values()) {
    if (answering(m) && m.data.role === 'leader' && (!best || m.data.term > best.data.term)) best = m;
  }
  return best;
}

function noteUpDown() {
  for (const m of members.values()) {
    const now = !!answering(m);
    // Not the first answer of each member as the page loads: only changes after that.
    if (now !== m.answering && (!now || m.wasDown)) {
      events.set('page:' + (++pageSeq), { member: m.id, t: Date.now(), kind: now ? 'up' : 'down', term: m.data ? m.data.term : 0 });
    }
    if (!now && m.answering) m.wasDown = true;
    m.answering = now;
  }
}

// ---------------------------------------------------------------- rendering

function render() {
  noteUpDown();
  const lead = leader();
  const maxTerm = Math.max(0, ...[...members.values()].filter(answering).map(m => m.data.term));
  setText('leader', lead ? lead.name : 'none');
  setText('term', maxTerm || '–');
  let perSecond = 0, p99 = 0;
  for (const m of members.values()) {
    if (answering(m)) { perSecond += m.data.writes.perSecond; p99 = Math.max(p99, m.data.writes.p99Ms); }
  }
  setText('writes', perSecond.toFixed(1));
  setText('p99', p99 ? p99.toFixed(1) + ' ms' : '–');
  const live = [...members.values()].filter(answering).length;
  setText('feed', `served by ${selfName} · ${live} of ${members.size} members answering · live: server-sent events, 4/s`);
  const anyone = [...members.values()].find(answering);
  setText('cluster-id', anyone && anyone.data.cluster_id ? anyone.data.cluster_id : '');
  renderMembers(lead);
  renderLog();
  renderTimeline();
  renderCoordination(lead);
}

// Cards are built once and updated in place: a button replaced under the pointer would swallow the click.
function renderMembers(lead) {
  const box = document.getElementById('members');
  for (const m of members.values()) {
    if (!m.card) {
      m.card = el('div');
      m.card.dataset.member = m.name;
      box.append(m.card);
    }
    const d = m.data || {};
    const up = answering(m);
    const role = !up ? 'down' : d.partitioned ? 'partitioned' : d.role;
    m.card.className = 'member ' + (up ? d.role : 'down') + (up && d.partitioned ? ' partitioned' : '');
    m.card.dataset.role = up ? d.role : 'down';
    let lag = '–';
    if (lead && up && lead !== m) {
      const p = lead.data.progress.find(x => x.id === m.id);
      if (p) lag = (lead.data.last - p.match) + ' behind' + (p.state === 'replicate' ? '' : ' (' + p.state + ')');
    } else if (lead === m) {
      lag = 'leads';
    }
    const title = el('div', 'name', m.name);
    title.append(el('span', 'role ' + role, roleLabel(role)));
    const rows = [['term', d.term], ['last log index', d.last], ['commit index', d.commit], ['applied index', d.applied],
      ['snapshot index', d.snapshot], ['lag (leader says)', lag]];
    const dl = el('dl');
    for (const [k, v] of rows) { dl.append(el('dt', '', k), el('dd', '', v === undefined ? '–' : String(v))); }
    const note = el('div', 'note', !m.data ? 'never answered this page'
      : !up ? 'not answering since ' + clock(m.seen) + ' (down or paused)'
      : d.leader && d.role !== 'leader' ? 'follows ' + nameOf(d.leader) : d.role !== 'leader' ? 'knows no leader' : '');
    if (!m.info) {
      m.info = el('div');
      m.card.append(m.info);
    }
    m.info.replaceChildren(title, dl, note);
    if (labOn) {
      const kind = [up, up && d.partitioned, lead === m, !!lead].join();
      if (kind !== m.buttonsKind) {
        if (m.buttons) m.buttons.remove();
        m.buttons = labButtons(m, up, lead);
        m.buttonsKind = kind;
        m.card.append(m.buttons);
      }
    }
  }
}

function roleLabel(role) {
  return { leader: 'LEADER', follower: 'FOLLOWER', candidate: 'CANDIDATE', pre_candidate: 'PRE-CANDIDATE',
    down: 'NOT ANSWERING', partitioned: 'PARTITIONED' }[role] || role.toUpperCase();
}

function renderLog() {
  const live = [...members.values()].filter(m => m.data);
  const top = Math.max(0, ...live.map(m => m.data.last));
  const from = Math.max(1, top - LOG_WIDTH + 1);
  const rows = [];
  const idx = el('div', 'idx');
  for (let i = from; i <= from + LOG_WIDTH - 1; i++) idx.append(el('span', '', i % 5 === 0 || i === from ? String(i) : ''));
  rows.push(idx);
  for (const m of members.values()) {
    const row = el('div', 'logrow');
    row.dataset.member = m.name;
    row.append(el('span', 'who', m.name));
    const strip = el('div', 'strip');
    const d = m.data;
    const byIndex = new Map(d ? d.log.map(([i, t, k]) => [i, [t, k]]) : []);
    for (let i = from; i <= from + LOG_WIDTH - 1; i++) {
      const e = byIndex.get(i);
      let box;
      if (e) {
        box = el('div', 'e' + (i > d.commit ? ' uncommitted' : ''));
        box.style.background = termColour(e[0]);
        box.append(document.createTextNode(String(e[0])), el('span', 'k', KIND_LETTER[e[1]] || '?'));
        box.title = `index ${i}, term ${e[0]}, ${e[1]}${i > d.commit ? ' (not committed yet)' : ''}`;
      } else if (d && i <= d.snapshot) {
        box = el('div', 'e snap', 's');
        box.title = `index ${i}: in ${m.name}'s snapshot (log compacted, §7)`;
      } else {
        box = el('div', 'e none', '');
      }
      if (d && i === d.commit) box.classList.add('commit');
      if (d && i === d.applied) box.classList.add('apply');
      strip.append(box);
    }
    if (!answering(m)) strip.style.opacity = .35;
    row.append(strip);
    rows.push(row);
  }
  document.getElementById('log').replaceChildren(...rows);
}

function renderTimeline() {
  const all = [...events.values()].sort((a, b) => b.t - a.t || (b.seq || 0) - (a.seq || 0));
  for (const key of [...events.keys()]) if (events.size > MAX_EVENTS) events.delete(key); else break;
  const last = new Map();   // member -> its previous role event, to tell what changed
  const lines = new Map();
  for (const e of [...all].reverse()) {
    lines.set(e, describe(e, last.get(e.member)));
    if (e.kind === 'role') last.set(e.member, e);
    if (e.kind === 'start') last.delete(e.member);   // a new life: its first role is news, not a change
  }
  const list = document.getElementById('timeline');
  list.replaceChildren(...all.slice(0, 120).filter(e => lines.get(e)).map(e => {
    const [text, cls] = lines.get(e);
    const li = el('li', cls || '');
    li.append(el('span', 't', clock(e.t)));
    const term = el('span', 'term', e.term ? 'T' + e.term : '');
    if (e.term) term.style.background = termColour(e.term);
    li.append(term, document.createTextNode(text));
    return li;
  }));
}

// One timeline line: [text, css class], or null for a change not worth a line.
function describe(e, prev) {
  const who = nameOf(e.member);
  switch (e.kind) {
    case 'start': return [`${who} started`, 'lab'];
    case 'lab': return [`${who}: ${e.text}`, 'lab'];
    case 'down': return [`${who} stopped answering (seen by this page)`, 'fault'];
    case 'up': return [`${who} answers`, ''];
  }
  const p = prev || {};
  if (e.role !== p.role) {
    switch (e.role) {
      case 'pre_candidate': return [`${who} heard no leader: pre-vote for term ${e.term + 1} (§9.6: would it win, without raising its term?)`, ''];
      case 'candidate': return [`${who} is a candidate in term ${e.term}, votes for itself and asks for votes (§5.2)`, ''];
      case 'leader': return [`${who} won the election: leader of term ${e.term}`, 'win'];
      case 'follower':
        if (p.role === 'leader' && e.term === p.term) return [`${who} stepped down: it lost touch with a majority (CheckQuorum)`, 'fault'];
        return [`${who} is a follower in term ${e.term}` + (e.leader ? ` of ${nameOf(e.leader)}` : ''), ''];
    }
  }
  if (e.vote && e.vote !== p.vote || e.term !== p.term && e.vote) {
    if (e.vote !== e.member) return [`${who} voted for ${nameOf(e.vote)} in term ${e.term}`, ''];
  }
  if (e.leader !== p.leader && e.leader) return [`${who} follows ${nameOf(e.leader)} in term ${e.term}`, ''];
  if (e.term !== p.term) return [`${who} moved to term ${e.term}`, ''];
  return null;
}

function renderCoordination(lead) {
  // The leader's applied state is the freshest; else any member that answers, the most applied first.
  const src = lead || [...members.values()].filter(answering).sort((a, b) => b.data.applied - a.data.applied)[0];
  setText('coord-source', src ? `— from ${src.name}'s applied state, revision order` : '— no member answers');
  if (!src) return;
  const c = src.data.coordination;
  const age = Date.now() - src.seen;   // count down between updates
  table('locks', ['lock', 'holder (lease)', 'fencing token', 'safe-until ≈', 'waiters'], c.locks.map(l => ({
    key: l.name, cells: [l.name, l.holder, l.token, countdown(l, age), l.waiters.map(w => w.lease + ' (rev ' + w.revision + ')').join(', ') || 'none']
  })), 'no locks held (rotactl lock NAME)');
  table('elections', ['election', 'leader says', 'epoch', 'lease', 'candidates waiting'], c.elections.map(e => ({
    key: e.name, cells: [e.name, e.value, e.token, e.holder, e.waiters.length]
  })), 'no elections (rotactl elect NAME VALUE)');
  table('jobs', ['job', 'runner token', 'recent runs (newest first)'], c.jobs.map(j => ({
    key: j.name, cells: [j.name, j.token || '–', j.runs.map(r => `${(r.fire || '').replace('T', ' ').replace(/\.\d+Z|Z/, '')} ${r.state} token ${r.token}${r.instance ? ' on ' + r.instance : ''}${r.outcome ? ' (' + r.outcome + ')' : ''}`).join(' · ') || 'no runs yet']
  })), 'no singleton jobs');
  table('leases', ['lease', 'TTL', 'expires in ≤', 'attached keys'], c.leases.map(l => ({
    key: l.id, cells: [l.id, l.ttl + ' s', seconds(l.remainingMs - age), l.keys.join(', ') || '–']
  })), 'no leases');
}

// safe-until, as the holder's SDK computes it, estimated from the server side: the lease's time left less the
// SDK's margin (10% of the TTL + 2 × 100 ms clock drift). The holder's own clock decides; this is a picture.
function countdown(lock, age) {
  if (lock.remainingMs === undefined) return '–';
  const safe = lock.remainingMs - age - (lock.ttl * 100 + 200);
  const frac = Math.max(0, Math.min(1, safe / (lock.ttl * 1000)));
  const span = el('span');
  const bar = el('span', 'bar' + (frac < 0.3 ? ' low' : ''));
  bar.style.width = Math.round(frac * 60) + 'px';
  span.append(bar, document.createTextNode(seconds(safe)));
  return span;
}

function table(id, head, rows, empty) {
  const box = document.getElementById(id);
  if (!rows.length) { box.replaceChildren(el('div', 'empty', empty)); return; }
  const t = el('table');
  const hr = el('tr');
  head.forEach(h => hr.append(el('th', '', h)));
  t.append(hr);
  for (const r of rows) {
    const tr = el('tr');
    tr.dataset.key = r.key;
    r.cells.forEach(c => tr.append(c instanceof Node ? wrapCell(c) : el('td', typeof c === 'number' ? 'num' : '', String(c))));
    t.append(tr);
  }
  box.replaceChildren(t);
}

function wrapCell(node) { const td = el('td', 'num'); td.append(node); return td; }

// ---------------------------------------------------------------- lab mode

function labButtons(m, up, lead) {
  const box = el('div', 'lab-buttons');
  const add = (label, action, fn) => {
    const b = el('button', '', label);
    b.dataset.action = action;
    b.onclick = () => fn().then(text => hint(action, m.name, text)).catch(err => hint(null, m.name, String(err)));
    box.append(b);
  };
  const script = action => () => labPost(labAgent(m), `/lab/member?action=${action}&name=${encodeURIComponent(m.name)}`);
  if (up) {
    add('kill', 'kill', script('kill'));
    add('pause', 'pause', script('pause'));
    add('restart', 'restart', script('restart'));
    if (m.data.partitioned) add('heal', 'heal', () => labPost(m, '/lab/partition?on=false'));
    else add('partition', 'partition', () => labPost(m, '/lab/partition?on=true'));
    if (lead && lead !== m) add('make leader', 'transfer', () => labPost(leader(), `/lab/transfer?to=${m.id}`));
  } else {
    add('resume', 'resume', script('resume'));
    add('restart', 'restart', script('restart'));
  }
  return box;
}

// Who runs cluster.sh: this page's own member if it answers and is not the target, else another that answers.
function labAgent(target) {
  const candidates = [...members.values()].filter(x => answering(x) && x.http !== null);
  return candidates.find(x => x.http === '' && x !== target) || candidates.find(x => x !== target) || candidates[0];
}

async function labPost(member, path) {
  if (!member) throw new Error('no member answers to carry out the action');
  const r = await fetch(member.http + path, { method: 'POST', headers: { 'X-Rota-Lab': 'yes' } });
  const text = await r.text();
  if (!r.ok) throw new Error(text);
  return text;
}

function hint(action, name, text) {
  const box = document.getElementById('lab-hint');
  box.textContent = (action ? LAB_HINTS[action](name) + ' ' : 'Lab action failed: ') + (text ? '[' + text.trim().split('\n').pop() + ']' : '');
}

// ---------------------------------------------------------------- helpers

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function setText(id, text) { document.getElementById(id).textContent = text; }

function nameOf(id) { const m = members.get(id); return m ? m.name : 'member ' + id; }

function clock(ms) {
  const d = new Date(ms);
  return d.toTimeString().substring(0, 8) + '.' + String(d.getMilliseconds()).padStart(3, '0');
}

function seconds(ms) { return ms <= 0 ? '0.0 s' : (ms / 1000).toFixed(1) + ' s'; }

// A colour per term, far apart for neighbouring terms (golden-angle hues).
function termColour(term) { return `hsl(${(term * 137.5) % 360}, 55%, 45%)`; }

start();
