/**
 * The live view (vncUrl): a page that shows the browser's screencast and sends mouse, wheel and
 * keyboard input back, under a bar with the watched tab's address (typed to navigate), back and
 * forward, and the tabs (a click watches another). It talks to `live/ws` on the same URL, with the
 * same token; with a view-only token the bar only shows.
 */
export function liveViewHtml() {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Live browser</title>
<style>html,body{margin:0;background:#111;color:#ddd;font:13px system-ui,sans-serif;height:100%}
#bar{padding:4px 8px}#nav{display:flex;gap:4px;padding:0 8px 4px}#nav input{flex:1;background:#222;color:#ddd;border:1px solid #444;padding:3px 6px}
#nav button,#tabs button{background:#222;color:#ddd;border:1px solid #444;padding:2px 8px}#tabs{display:flex;gap:4px;padding:0 8px 4px;overflow-x:auto}
#tabs button[aria-pressed=true]{border-color:#8af}#tabs button{max-width:14rem;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
#screen{display:block;max-width:100%;max-height:calc(100% - 86px);margin:0 auto;outline:none;cursor:default}</style></head>
<body><div id="bar">Live view · <span id="status">connecting…</span> · <span id="frames">0</span> frames</div>
<form id="nav"><button type="button" id="back" aria-label="back" disabled>←</button><button type="button" id="forward" aria-label="forward" disabled>→</button>
<input id="address" aria-label="address" spellcheck="false" autocomplete="off"><button type="submit">Go</button></form>
<div id="tabs" role="toolbar" aria-label="tabs"></div>
<img id="screen" tabindex="0" alt="browser screen" draggable="false">
<script>
const img = document.getElementById('screen'), statusEl = document.getElementById('status'), framesEl = document.getElementById('frames');
const url = new URL(location.href); url.pathname = url.pathname.replace(/\\/live\\/?$/, '/live/ws'); url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
const ws = new WebSocket(url); let frames = 0, meta = null;
window.liveView = { get frames() { return frames; } };
ws.onopen = () => { statusEl.textContent = 'connected'; };
ws.onclose = () => { statusEl.textContent = 'disconnected'; };
ws.onmessage = (event) => { const msg = JSON.parse(event.data);
  if (msg.type === 'frame') { img.src = 'data:image/jpeg;base64,' + msg.data; meta = msg.metadata; frames++; framesEl.textContent = frames; }
  if (msg.type === 'end') { statusEl.textContent = 'browser stopped'; }
  if (msg.type === 'location') { if (document.activeElement !== address) address.value = msg.url; back.disabled = !msg.canGoBack; forward.disabled = !msg.canGoForward; }
  if (msg.type === 'refused') { statusEl.textContent = msg.message; }
  if (msg.type === 'tabs') { tabsEl.replaceChildren(...msg.tabs.map((tab) => { const b = document.createElement('button'); b.type = 'button';
    b.textContent = tab.title || tab.url || 'new tab'; b.title = tab.url; b.setAttribute('aria-pressed', String(tab.targetId === msg.current));
    b.onclick = () => send({ type: 'tab', targetId: tab.targetId }); return b; })); } };
const address = document.getElementById('address'), back = document.getElementById('back'), forward = document.getElementById('forward'), tabsEl = document.getElementById('tabs');
document.getElementById('nav').addEventListener('submit', (e) => { e.preventDefault(); send({ type: 'navigate', url: address.value }); address.blur(); });
back.onclick = () => send({ type: 'history', delta: -1 }); forward.onclick = () => send({ type: 'history', delta: 1 });
const send = (msg) => ws.readyState === 1 && ws.send(JSON.stringify(msg));
const point = (e) => { const r = img.getBoundingClientRect(); const w = meta ? meta.deviceWidth : img.naturalWidth, h = meta ? meta.deviceHeight : img.naturalHeight;
  return { x: (e.clientX - r.left) * w / r.width, y: (e.clientY - r.top) * h / r.height }; };
const buttons = ['left', 'middle', 'right'];
img.addEventListener('mousedown', (e) => { img.focus(); send({ type: 'mouse', event: 'mousePressed', button: buttons[e.button] || 'left', clickCount: e.detail || 1, ...point(e) }); e.preventDefault(); });
img.addEventListener('mouseup', (e) => send({ type: 'mouse', event: 'mouseReleased', button: buttons[e.button] || 'left', clickCount: e.detail || 1, ...point(e) }));
img.addEventListener('mousemove', (e) => send({ type: 'mouse', event: 'mouseMoved', button: 'none', ...point(e) }));
img.addEventListener('wheel', (e) => { send({ type: 'wheel', deltaX: e.deltaX, deltaY: e.deltaY, ...point(e) }); e.preventDefault(); }, { passive: false });
img.addEventListener('contextmenu', (e) => e.preventDefault());
img.addEventListener('keydown', (e) => { send({ type: 'key', event: 'keyDown', key: e.key, code: e.code, text: e.key.length === 1 ? e.key : undefined, keyCode: e.keyCode }); e.preventDefault(); });
img.addEventListener('keyup', (e) => { send({ type: 'key', event: 'keyUp', key: e.key, code: e.code, keyCode: e.keyCode }); e.preventDefault(); });
</script></body></html>`;
}
