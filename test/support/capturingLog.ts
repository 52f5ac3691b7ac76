import { Writable } from 'node:stream';
import pino from 'pino';

/** A logger whose lines a test reads back (`level` 40 is a warning), instead of one that writes to stdout. */
export function capturingLog() {
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { log: pino(sink), lines };
}
