// antiproof's proof browser: the board (chessground) and the line in the
// URL. Everything else is the server's: each position's state (legal
// moves, the panel's HTML) comes from GET /api/line?line=... (docs/web.md).
// SPDX-License-Identifier: GPL-3.0-or-later
import { Chessground } from '/assets/chessground.min.js';

const $ = (id) => document.getElementById(id);
const boardEl = $('board');
const panel = $('panel');
let state = JSON.parse($('state').textContent);
state.panel = panel.innerHTML;
// The furthest line visited along the current one: Right and End follow it.
let path = state.line.slice();
// Answers to older requests are dropped (keys pressed quickly); `want` is
// the line last asked for, which the keys step from until it is shown.
let asked = 0;
let want = null;

const lineUrl = (line) => (line.length ? '/browse?line=' + line.join(',') : '/browse');
const isPrefix = (a, b) => a.length <= b.length && a.every((m, i) => m === b[i]);

function dests(legal) {
  const d = new Map();
  for (const uci of legal) {
    const from = uci.slice(0, 2);
    if (!d.has(from)) d.set(from, []);
    const to = uci.slice(2, 4);
    if (!d.get(from).includes(to)) d.get(from).push(to);
  }
  return d;
}

const cg = Chessground(boardEl, {
  coordinates: true,
  autoCastle: false,
  premovable: { enabled: false },
  highlight: { lastMove: true, check: false },
  animation: { enabled: true, duration: 150 },
  movable: { free: false, showDests: true, events: { after: onBoardMove } },
});

function show(st) {
  state = st;
  cg.set({
    fen: st.fen,
    turnColor: st.turn,
    lastMove: st.last_move || undefined,
    movable: { color: st.game_over ? undefined : st.turn, dests: dests(st.legal) },
  });
  panel.innerHTML = st.panel;
  $('fen').textContent = st.fen;
  $('lichess').href = st.lichess;
  document.title = st.title;
}

function say(text) {
  $('note').textContent = text;
}

// Shows `line` (UCI moves); `push`: a new history entry.
async function go(line, push = true) {
  const mine = ++asked;
  want = line;
  let st;
  try {
    const r = await fetch('/api/line?line=' + encodeURIComponent(line.join(',')));
    st = await r.json();
    if (!r.ok) throw new Error(st.error || r.status);
  } catch (e) {
    if (mine === asked) {
      want = null;
      say('could not show the line: ' + e.message);
      show(state); // the board back where it was
    }
    return;
  }
  if (mine !== asked) return;
  want = null;
  say('');
  if (!isPrefix(st.line, path)) path = st.line.slice();
  // (The line shown already, asked again: no second history entry.)
  const same = history.state && String(history.state.line) === String(st.line);
  if (push && !same) history.pushState({ line: st.line }, '', lineUrl(st.line));
  show(st);
}

function play(uci) {
  go(state.line.concat([uci]));
}

function onBoardMove(orig, dest) {
  const options = state.legal.filter((u) => u.startsWith(orig + dest));
  if (options.length <= 1) {
    play(options[0] || orig + dest);
    return;
  }
  // A promotion: one button a piece (antichess promotes to a king too).
  const names = { q: 'queen', r: 'rook', b: 'bishop', n: 'knight', k: 'king' };
  const box = $('promote');
  box.replaceChildren('promote to: ');
  for (const u of options) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = names[u[4]] || u;
    b.addEventListener('click', () => {
      box.hidden = true;
      play(u);
    });
    box.append(b);
  }
  const cancel = document.createElement('button');
  cancel.type = 'button';
  cancel.textContent = 'cancel';
  cancel.addEventListener('click', () => {
    box.hidden = true;
    show(state);
  });
  box.append(cancel);
  box.hidden = false;
}

function step(key) {
  const line = want || state.line;
  if (key === 'ArrowLeft') return line.length ? line.slice(0, -1) : null;
  if (key === 'Home') return line.length ? [] : null;
  if (key === 'End') return path.length > line.length ? path.slice() : null;
  if (key === 'ArrowRight') {
    if (isPrefix(line, path) && path.length > line.length) return path.slice(0, line.length + 1);
    // Past the line: the proof's move, once this position is shown.
    return state.forward && !want ? line.concat([state.forward]) : null;
  }
  return null;
}

document.addEventListener('keydown', (e) => {
  if (e.altKey || e.ctrlKey || e.metaKey) return;
  const t = e.target;
  if (t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA')) return;
  const line = step(e.key);
  if (line === null) return;
  e.preventDefault();
  go(line);
});

// Links of the panel stay on the page: moves of the line (data-ply: the
// line's first plies), moves and back and forward (data-line).
document.addEventListener('click', (e) => {
  const a = e.target.closest && e.target.closest('a[data-line], a[data-ply]');
  if (!a || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
  e.preventDefault();
  if (a.dataset.ply !== undefined) go(state.line.slice(0, Number(a.dataset.ply)));
  else go(a.dataset.line ? a.dataset.line.split(',') : []);
});

window.addEventListener('popstate', (e) => {
  const line = e.state && Array.isArray(e.state.line) ? e.state.line : null;
  if (line) go(line, false);
  else location.reload();
});

$('flip').addEventListener('click', () => cg.toggleOrientation());

$('copy-fen').addEventListener('click', async () => {
  try {
    await navigator.clipboard.writeText(state.fen);
    say('FEN copied');
  } catch {
    // No clipboard (an insecure origin): select the FEN for Ctrl-C.
    const range = document.createRange();
    range.selectNodeContents($('fen'));
    const sel = getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
    say('FEN selected: press Ctrl-C');
  }
});

window.addEventListener('resize', () => cg.redrawAll());

document.body.classList.remove('nojs');
// The address in UCI (a line typed in SAN is rewritten), as a history entry
// of its own.
history.replaceState({ line: state.line }, '', lineUrl(state.line));
show(state);
