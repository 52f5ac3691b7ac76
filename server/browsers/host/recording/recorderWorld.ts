import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * What runs in each recorded page: rrweb's recorder, in an isolated world of its own
 * (`RECORDER_WORLD`), which shares the page's DOM and none of its JavaScript. The page's own
 * script cannot see it (no global, no patched prototype, no listener of its world), nor call the
 * binding its events leave through (`RECORDER_BINDING`, installed in this world only).
 *
 * Every document of a recorded page gets only a small script at its start (`recorderLoader`), which
 * says through the binding that the document is ready once it has loaded. The host then sends the
 * recorder itself (`recorderSource`, about 79 KB) into that document's world and starts it, with
 * what it must mask: password inputs always, and every input while a run with secrets drives the
 * browser (`mask`). So the page's own load (and a client's goto) never waits for the recorder to
 * be compiled or for its first snapshot, which holds the whole document as it is once loaded. It is never handed
 * a value to look for: secret values a page prints as text are replaced on the host's side
 * (../../recordings/recordingFiles.ts, `scrubSecrets`).
 */
export const RECORDER_WORLD = 'browserflow-recorder';
export const RECORDER_BINDING = '__browserflowRecording';
/** What a document's loader sends once the document has loaded: the host sends the recorder then. */
export const RECORDER_READY = 'ready';
/** The world's control object, a global of the isolated world only. */
export const RECORDER_CONTROL = '__browserflowRecorder';

/** Events a batch holds at most before it is sent, and how long the first of a batch waits. */
const BATCH_EVENTS = 200;
const BATCH_MS = 500;
/** How long a recorder started before its document loaded waits for the load before it records anyway. */
const LOAD_WAIT_MS = 3000;
/** How long a loaded document waits for an idle moment before its recorder is sent anyway. */
const IDLE_WAIT_MS = 1000;

/** The input types rrweb can mask; all are handed to `maskInputFn`, which decides. */
const maskableTypes = [
  'color',
  'date',
  'datetime-local',
  'email',
  'month',
  'number',
  'range',
  'search',
  'tel',
  'text',
  'time',
  'url',
  'week',
  'textarea',
  'select',
  'password',
];

/**
 * rrweb marks an input whose type changed from `password` with an attribute (`data-rr-is-password`),
 * which the page could see. Here the mark is a WeakSet of the world instead. The minifier names the
 * element differently from one build to the next, so the calls are matched with its name.
 */
function withoutPasswordAttribute(source: string) {
  const replacements: [RegExp, (name: string) => string][] = [
    [/\b([A-Za-z_$][\w$]*)\.setAttribute\("data-rr-is-password","true"\)/, (name) => `__bfWasPassword.add(${name})`],
    [/\b([A-Za-z_$][\w$]*)\.hasAttribute\("data-rr-is-password"\)/, (name) => `__bfWasPassword.has(${name})`],
  ];
  let patched = source;
  for (const [from, to] of replacements) {
    const found = from.exec(patched);
    if (!found?.[1]) throw new Error(`rrweb's recorder changed: ${from} not found (server/browsers/host/recording/recorderWorld.ts)`);
    patched = patched.replace(from, to(found[1]));
  }
  if (patched.includes('data-rr-is-password"'))
    throw new Error(`rrweb's recorder changed: it still sets data-rr-is-password (server/browsers/host/recording/recorderWorld.ts)`);
  return patched;
}

/** The script the host adds to every document of a recorded page, in `RECORDER_WORLD`. */
export function recorderLoader() {
  return `(() => {
  // Frames of the page are recorded by its top document's recorder (rrweb records same-origin iframes).
  if (window !== window.top) return;
  // A tab's first blank document (before its first navigation) has nothing to replay.
  if (location.href === 'about:blank') return;
  const send = globalThis[${JSON.stringify(RECORDER_BINDING)}];
  let sent = false;
  const ready = () => {
    if (sent) return;
    sent = true;
    send(${JSON.stringify(RECORDER_READY)});
  };
  if (document.readyState === 'complete') requestIdleCallback(ready, { timeout: ${IDLE_WAIT_MS} });
  else {
    // Once the page is idle after its load event, which a goto waits for; a load that never comes
    // (a resource that hangs) is not waited for past a few seconds.
    addEventListener('load', () => requestIdleCallback(ready, { timeout: ${IDLE_WAIT_MS} }), { once: true });
    setTimeout(ready, ${LOAD_WAIT_MS});
  }
})();`;
}

let source: string | undefined;

/**
 * rrweb's recorder with the world's control (`RECORDER_CONTROL`), sent by the host into a
 * document's recorder world once its loader said it is ready; a second evaluation in the same
 * document changes nothing.
 */
export function recorderSource() {
  if (source) return source;
  // rrweb's recorder alone (@rrweb/record, about 77 KB minified), not the whole of rrweb with its
  // replayer (about 280 KB): every recorded document compiles it (docs/benchmarks/browser-start.md, Recorder).
  const recordDir = path.dirname(createRequire(import.meta.url).resolve('@rrweb/record'));
  const rrweb = withoutPasswordAttribute(readFileSync(path.join(recordDir, 'record.umd.min.cjs'), 'utf8'));
  source = `(() => {
  if (globalThis[${JSON.stringify(RECORDER_CONTROL)}]) return;
  const __bfWasPassword = new WeakSet();
  const module = { exports: {} };
  const exports = module.exports;
  ${rrweb}
  const rrweb = module.exports;
  const send = globalThis[${JSON.stringify(RECORDER_BINDING)}];
  const maskableTypes = ${JSON.stringify(maskableTypes)};
  let buffer = [];
  let timer = null;
  let maskAll = false;
  let stopRecording = null;
  let stopped = false;
  const flush = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    if (buffer.length === 0) return;
    const batch = buffer;
    buffer = [];
    send(JSON.stringify(batch));
  };
  const isPassword = (element) => {
    if (element && element.type === 'password') __bfWasPassword.add(element);
    return __bfWasPassword.has(element);
  };
  globalThis[${JSON.stringify(RECORDER_CONTROL)}] = {
    start(options) {
      maskAll = Boolean(options.maskAll);
      if (stopRecording || stopped) return;
      stopRecording = rrweb.record({
        emit(event) {
          buffer.push(event);
          if (buffer.length >= ${BATCH_EVENTS}) flush();
          else if (timer === null) timer = setTimeout(flush, ${BATCH_MS});
        },
        maskInputOptions: Object.fromEntries(maskableTypes.map((type) => [type, true])),
        maskInputFn: (text, element) => (maskAll || isPassword(element) ? '*'.repeat(text.length) : text),
        recordCanvas: false,
        collectFonts: false,
        inlineImages: false,
        recordCrossOriginIframes: false,
        sampling: { mousemove: 50, scroll: 150, input: 'last' },
      }) || null;
      addEventListener('pagehide', flush);
    },
    mask(all) {
      maskAll = Boolean(all);
    },
    flush,
    stop() {
      stopped = true;
      if (stopRecording) stopRecording();
      flush();
    },
  };
})();`;
  return source;
}
