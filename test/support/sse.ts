export type SseEvent = { id?: string; event: string; data: string };

/** Reads an SSE response until `until` returns true for the events so far, or the time runs out. */
export async function readSse(
  url: string,
  options: { headers?: Record<string, string>; until: (events: SseEvent[]) => boolean; timeoutMs?: number },
) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), options.timeoutMs ?? 20_000);
  const events: SseEvent[] = [];
  try {
    const response = await fetch(url, { headers: { accept: 'text/event-stream', ...options.headers }, signal: controller.signal });
    if (!response.ok || !response.body) throw new Error(`SSE request failed with ${response.status}: ${await response.text()}`);
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of response.body) {
      buffer += decoder.decode(chunk as Uint8Array, { stream: true });
      let cut = buffer.indexOf('\n\n');
      while (cut !== -1) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event: SseEvent = { event: 'message', data: '' };
        let hasData = false;
        for (const line of block.split('\n')) {
          if (line.startsWith('id: ')) event.id = line.slice(4);
          else if (line.startsWith('event: ')) event.event = line.slice(7);
          else if (line.startsWith('data: ')) {
            event.data += line.slice(6);
            hasData = true;
          }
        }
        if (hasData) events.push(event);
        if (options.until(events)) return events;
        cut = buffer.indexOf('\n\n');
      }
    }
    return events;
  } catch (error) {
    if (controller.signal.aborted) return events;
    throw error;
  } finally {
    clearTimeout(timer);
    controller.abort();
  }
}
