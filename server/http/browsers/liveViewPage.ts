/**
 * The live view (vncUrl): a page that shows the browser's screencast and sends mouse, wheel and
 * keyboard input back. It talks to `live/ws` on the same URL, with the same token.
 */
export function liveViewHtml() {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Live browser</title>
<style>html,body{margin:0;background:#111;color:#ddd;font:13px system-ui,sans-serif;height:100%}
#bar{padding:4px 8px}#screen{display:block;max-width:100%;max-height:calc(100% - 28px);margin:0 auto;outline:none;cursor:default}</style></head>
<body><div id="bar">Live view · <span id="status">connecting…</span> · <span id="frames">0</span> frames</div>
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
  if (msg.type === 'end') { statusEl.textContent = 'browser stopped'; } };
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
