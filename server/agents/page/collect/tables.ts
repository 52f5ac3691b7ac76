import type { PageTable } from '../pageModel.ts';
import { headingBefore } from './headings.ts';
import { selectorOf } from './selector.ts';
import { clean } from './text.ts';
import { visible } from './visible.ts';

/**
 * The page's visible tables, read as `extract.table` reads a table on the browser host
 * (server/browsers/host/nodes/browserNodes.ts), so the headers named here are the keys of its
 * records: keep the two alike.
 */
export function readTables(): PageTable[] {
  return [...document.querySelectorAll('table')].filter(visible).map(readTable);
}

/** One table: its keys, its data rows and, when each row links to a page of its own, that link. */
export function readTable(table: HTMLTableElement): PageTable {
  const rows = [...table.rows];
  const head = table.tHead ? [...table.tHead.rows] : [];
  const foot = table.tFoot ? [...table.tFoot.rows] : [];
  let body = rows.filter((row) => !head.includes(row) && !foot.includes(row));
  let header = head.at(-1);
  if (!header && body[0] && !rowHeaded(body[0])) {
    header = body[0];
    body = body.slice(1);
  }
  // Data rows hold a <td>: a group's heading row (`<th colspan=3>Europe</th>`) between tbodies is none.
  const data = body.filter((row) => [...row.cells].some((cell) => cell.tagName === 'TD'));
  // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, as extract.table reads it
  const texts = header ? [...header.cells].map((cell) => clean((cell as HTMLElement).innerText ?? cell.textContent)) : [];
  const headers = headerKeys(texts, Math.max(texts.length, ...data.map((row) => row.cells.length)));
  const tableSelector = selectorOf(table);
  const rowLink = rowLinkOf(table, tableSelector, data, head, headers.length);
  return {
    selector: tableSelector,
    caption: table.caption ? clean(table.caption.textContent) : null,
    heading: headingBefore(table),
    headers,
    rowCount: data.length,
    ...(rowLink ?? {}),
  };
}

/** A row that starts with a row header (`<th scope=row>`) and holds data: a data row, not the header. */
export function rowHeaded(row: HTMLTableRowElement) {
  return row.cells[0]?.tagName === 'TH' && [...row.cells].slice(1).some((cell) => cell.tagName === 'TD');
}

/** The keys of `width` columns named `texts`: blanks as `column<n>`, repeats with `_2`, `_3`. */
export function headerKeys(texts: string[], width: number) {
  const headers: string[] = [];
  for (let index = 0; index < width; index++) {
    const base = texts[index] || `column${index + 1}`;
    let key = base;
    for (let n = 2; headers.includes(key); n++) key = `${base}_${n}`;
    headers.push(key);
  }
  return headers;
}

/**
 * A column where every data row (of two or more, in tbodies) holds one link of its own, to a page
 * of the web: each row's own page. Only the data rows' links: none in a header or group row the
 * selector would match too.
 */
export function rowLinkOf(
  table: HTMLTableElement,
  tableSelector: string,
  data: HTMLTableRowElement[],
  head: HTMLTableRowElement[],
  width: number,
): { linkSelector: string; linkSample: string } | undefined {
  const inBodies = data.every((row) => row.parentElement?.tagName === 'TBODY' && !head.includes(row));
  if (data.length < 2 || !inBodies) return undefined;
  for (let index = 0; index < width; index++) {
    const anchors = data.map((row) => row.cells[index]?.querySelectorAll('a[href]'));
    if (!anchors.every((found) => found?.length === 1)) continue;
    const hrefs = anchors.map((found) => (found?.[0] as HTMLAnchorElement | undefined)?.href ?? '');
    const matched = table.querySelectorAll(`:scope > tbody > tr > :nth-child(${index + 1}) a[href]`).length;
    if (matched === data.length && new Set(hrefs).size === hrefs.length && hrefs.every((href) => /^https?:/.test(href)))
      return { linkSelector: `${tableSelector} > tbody > tr > :nth-child(${index + 1}) a[href]`, linkSample: hrefs[0] as string };
  }
  return undefined;
}
