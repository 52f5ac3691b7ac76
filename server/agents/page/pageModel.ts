/**
 * The page model: a deterministic, compact description of a live page that every model gets as a
 * tool and that the `builtin` proposer works from. It lists what a pipeline can act on (forms and
 * their inputs, buttons, links, navigation and pagination) and what it can extract (tables,
 * repeated lists, headings), each with a stable selector: a test id, an id, a name, a role with its
 * name, then text. Input values are never read: only whether an input holds one.
 *
 * `readPageModel` runs `collect` inside the page (Playwright serialises the function, so it uses
 * nothing from this module's scope).
 */
import type { Page } from 'playwright-core';
import { evaluateIsolated } from '../../browsers/host/isolatedWorld.ts';

export type ElementRef = { selector: string; text: string };
export type FormInput = {
  selector: string;
  label: string;
  type: string;
  name: string | null;
  required: boolean;
  /** Whether it holds a value now; the value itself is never read. */
  filled: boolean;
};
export type PageForm = { selector: string; purpose: 'login' | 'search' | 'other'; inputs: FormInput[]; submit: ElementRef[] };
export type PageLink = ElementRef & { href: string };
/**
 * `headers`: the keys `extract.table` gives each record (the last row of `<thead>`, else a first row
 * that is no data row; blanks as `column<n>`, repeats with `_2`). `rowCount`: its data rows, across
 * every `<tbody>` (group rows and `<tfoot>` left out). `heading`: what names it on the page (its
 * aria-label, or the nearest heading before it).
 */
export type PageTable = {
  selector: string;
  caption: string | null;
  heading: string | null;
  headers: string[];
  rowCount: number;
  /** The link every data row holds in one column (a row's own page), and the first row's address. */
  linkSelector?: string;
  linkSample?: string;
};
export type ListField = { name: string; selector: string; attribute?: string; sample: string };
/** `linkSelector`: the link of each item (when items have one), e.g. to visit every item's page. */
export type PageList = {
  selector: string;
  itemSelector: string;
  count: number;
  fields: ListField[];
  linkSelector?: string;
  /** What names the list on the page: its aria-label, or the nearest heading before it. */
  heading?: string | null;
};
/**
 * A labelled value of a detail page: a `<dl>` entry, a row of a table of row headers
 * (`<th>Price</th><td>…`), a value after a label ("Price:"), or an element with a test id or `itemprop`.
 */
export type PageDetail = { name: string; selector: string; sample: string };
/**
 * How a listing goes on past what the page shows now, with the selector a `paging` step needs:
 * - `links`: a pager (numbered links, "Next", "Older stories", `a[rel=next]`); `selector` matches
 *   its links, `pages` are the numbered ones, `current` the number shown as the current page
 *   (plain text or `aria-current`), `next` the link onwards;
 * - `more`: a "Load more"/"Show more"/"More" button; `selector` is the button;
 * - `scroll`: no pager or button, but a listing on a page taller than the window: it may load more
 *   when scrolled to the bottom. A guess: only a `scroll` call shows whether it grows. No selector.
 */
export type PagePagination = {
  kind: 'links' | 'more' | 'scroll';
  selector?: string;
  current: string | null;
  pages: PageLink[];
  next: PageLink | null;
};
export type PageModel = {
  url: string;
  title: string;
  headings: (ElementRef & { level: number })[];
  forms: PageForm[];
  buttons: ElementRef[];
  links: PageLink[];
  navigation: { selector: string; label: string; links: PageLink[] }[];
  pagination: PagePagination | null;
  tables: PageTable[];
  lists: PageList[];
  details: PageDetail[];
};

const MAX_LINKS = 60;
const MAX_TEXT = 80;

/** Reads the page model of `page` (at most a few hundred elements of each kind), in the host's isolated world. */
export async function readPageModel(page: Page): Promise<PageModel> {
  return evaluateIsolated(page, collect, { maxLinks: MAX_LINKS, maxText: MAX_TEXT });
}

/** Every selector a page model names: what a proposal may use. */
export function pageModelSelectors(model: PageModel): Set<string> {
  const selectors = new Set<string>();
  const add = (selector: string | undefined) => selector && selectors.add(selector);
  for (const heading of model.headings) add(heading.selector);
  for (const form of model.forms) {
    add(form.selector);
    for (const input of form.inputs) add(input.selector);
    for (const submit of form.submit) add(submit.selector);
  }
  for (const element of [...model.buttons, ...model.links, ...model.navigation.flatMap((nav) => nav.links)]) add(element.selector);
  for (const nav of model.navigation) add(nav.selector);
  if (model.pagination) {
    add(model.pagination.selector);
    for (const link of model.pagination.pages) add(link.selector);
    add(model.pagination.next?.selector);
  }
  for (const table of model.tables) {
    add(table.selector);
    add(table.linkSelector);
  }
  for (const list of model.lists) {
    add(list.selector);
    add(list.itemSelector);
    add(list.linkSelector);
  }
  for (const detail of model.details) add(detail.selector);
  return selectors;
}

/** Runs in the page: keep it self-contained. */
function collect({ maxLinks, maxText }: { maxLinks: number; maxText: number }): PageModel {
  const clean = (text: string | null | undefined) => (text ?? '').replace(/\s+/g, ' ').trim().slice(0, maxText);
  const cssId = (value: string) => (/^[A-Za-z][A-Za-z0-9_-]*$/.test(value) ? `#${value}` : `[id="${value.replace(/"/g, '\\"')}"]`);
  const quote = (value: string) => `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
  /** `child` inside `parent`: CSS descends with a space, Playwright's own engines chain with `>>`. */
  const within = (parent: string, child: string) =>
    /^(role|text|internal:)/.test(parent) ? `${parent} >> ${child}` : `${parent} ${child}`;
  const unique = (selector: string, element: Element) => {
    try {
      const found = document.querySelectorAll(selector);
      return found.length === 1 && found[0] === element;
    } catch {
      return false;
    }
  };
  const visible = (element: Element) => {
    const box = (element as HTMLElement).getBoundingClientRect?.();
    const style = getComputedStyle(element);
    return Boolean(box && box.width > 0 && box.height > 0 && style.visibility !== 'hidden' && style.display !== 'none');
  };
  const labelOf = (element: Element): string => {
    const aria = element.getAttribute('aria-label');
    if (aria) return clean(aria);
    const labelledBy = element.getAttribute('aria-labelledby');
    if (labelledBy)
      return clean(
        labelledBy
          .split(/\s+/)
          .map((id) => document.getElementById(id)?.textContent ?? '')
          .join(' '),
      );
    const id = element.getAttribute('id');
    if (id) {
      const label = document.querySelector(`label[for=${quote(id)}]`);
      if (label) return clean(label.textContent);
    }
    const wrapping = element.closest('label');
    if (wrapping) return clean(wrapping.textContent);
    return clean(element.getAttribute('placeholder') ?? element.getAttribute('title') ?? '');
  };
  const roleOf = (element: Element) => {
    const explicit = element.getAttribute('role');
    if (explicit) return explicit;
    const tag = element.tagName.toLowerCase();
    if (tag === 'nav') return 'navigation';
    if (tag === 'a') return 'link';
    if (tag === 'button') return 'button';
    if (tag === 'input') {
      const type = (element.getAttribute('type') ?? 'text').toLowerCase();
      if (['submit', 'button', 'reset'].includes(type)) return 'button';
      if (type === 'checkbox') return 'checkbox';
      if (type === 'search') return 'searchbox';
      return 'textbox';
    }
    if (tag === 'textarea') return 'textbox';
    if (tag === 'select') return 'combobox';
    if (tag === 'table') return 'table';
    return null;
  };
  const nameOf = (element: Element) => {
    const tag = element.tagName.toLowerCase();
    if (tag === 'input' || tag === 'textarea' || tag === 'select') {
      const type = (element.getAttribute('type') ?? '').toLowerCase();
      if (['submit', 'button'].includes(type)) return clean((element as HTMLInputElement).value || labelOf(element));
      return labelOf(element);
    }
    // A table is named by its label or caption, never by its content (the role engine does the same).
    if (tag === 'table') return clean(element.getAttribute('aria-label') ?? (element as HTMLTableElement).caption?.textContent ?? '');
    return clean(element.getAttribute('aria-label') ?? element.textContent);
  };
  /** The most stable selector that picks out `element` alone. */
  const selectorOf = (element: Element): string => {
    const testId = element.getAttribute('data-testid') ?? element.getAttribute('data-test-id') ?? element.getAttribute('data-test');
    if (testId) {
      const attribute = element.hasAttribute('data-testid')
        ? 'data-testid'
        : element.hasAttribute('data-test-id')
          ? 'data-test-id'
          : 'data-test';
      const selector = `[${attribute}=${quote(testId)}]`;
      if (unique(selector, element)) return selector;
    }
    const id = element.getAttribute('id');
    if (id && !/\d{4,}|^[0-9]|:/.test(id)) {
      const selector = cssId(id);
      if (unique(selector, element)) return selector;
    }
    const tag = element.tagName.toLowerCase();
    const name = element.getAttribute('name');
    if (name && ['input', 'select', 'textarea', 'button', 'form'].includes(tag)) {
      const selector = `${tag}[name=${quote(name)}]`;
      if (unique(selector, element)) return selector;
    }
    const role = roleOf(element);
    const accessible = nameOf(element);
    if (role && accessible) {
      const selector = `role=${role}[name=${quote(accessible)}]`;
      // The role engine matches substrings unless the name is exact; exact keeps it to this element.
      const exact = `role=${role}[name=${quote(accessible)}s]`;
      const sameName = [...document.querySelectorAll(tag)].filter((other) => roleOf(other) === role && nameOf(other) === accessible);
      if (sameName.length === 1) return accessible.length < maxText ? exact : selector;
    }
    // A structural path of tags from the nearest ancestor with an id or test id.
    const parts: string[] = [];
    let node: Element | null = element;
    while (node && node !== document.body) {
      const parent: Element | null = node.parentElement;
      const anchorId = node.getAttribute('id');
      const anchorTest = node.getAttribute('data-testid');
      if (node !== element && anchorTest) {
        parts.unshift(`[data-testid=${quote(anchorTest)}]`);
        break;
      }
      if (node !== element && anchorId && !/\d{4,}|^[0-9]|:/.test(anchorId)) {
        parts.unshift(cssId(anchorId));
        break;
      }
      const nodeTag = node.tagName.toLowerCase();
      const current: Element = node;
      const siblings = parent ? [...parent.children].filter((child) => child.tagName === current.tagName) : [];
      parts.unshift(siblings.length > 1 ? `${nodeTag}:nth-of-type(${siblings.indexOf(current) + 1})` : nodeTag);
      node = parent;
    }
    // The shortest tail of the path that still picks out the element alone: it survives wrappers
    // a redesign adds around it.
    for (let start = parts.length - 1; start > 0; start--) {
      const tail = parts.slice(start).join(' > ');
      if (unique(tail, element)) return tail;
    }
    return parts.join(' > ');
  };

  const headings = [...document.querySelectorAll('h1, h2, h3')]
    .filter(visible)
    .slice(0, 30)
    .map((element) => ({ level: Number(element.tagName[1]), text: clean(element.textContent), selector: selectorOf(element) }));

  const forms: PageForm[] = [];
  const formElements = [...document.querySelectorAll('form')];
  for (const form of formElements) {
    const inputs = [...form.querySelectorAll('input, select, textarea')]
      .filter((input) => !['hidden', 'submit', 'button', 'reset', 'image'].includes((input.getAttribute('type') ?? '').toLowerCase()))
      .filter(visible)
      .map((input) => ({
        selector: selectorOf(input),
        label: labelOf(input),
        type: input.tagName.toLowerCase() === 'input' ? (input.getAttribute('type') ?? 'text').toLowerCase() : input.tagName.toLowerCase(),
        name: input.getAttribute('name'),
        required: input.hasAttribute('required') || input.getAttribute('aria-required') === 'true',
        filled: Boolean((input as HTMLInputElement).value),
      }));
    const submit = [...form.querySelectorAll('button, input[type=submit], input[type=image]')]
      .filter((button) => (button.getAttribute('type') ?? 'submit').toLowerCase() === 'submit')
      .filter(visible)
      .map((button) => ({ selector: selectorOf(button), text: nameOf(button) }));
    const types = inputs.map((input) => input.type);
    // Its role, address, fields and buttons: a search may say so only as "Keyword" and "Find parts".
    const words = `${form.getAttribute('role') ?? ''} ${form.getAttribute('action') ?? ''} ${inputs.map((input) => `${input.name} ${input.label}`).join(' ')} ${submit.map((button) => button.text).join(' ')}`;
    const purpose = types.includes('password')
      ? 'login'
      : types.includes('search') || /search|query|\bq\b|find|keywords?\b|look\s?up/i.test(words)
        ? 'search'
        : 'other';
    forms.push({ selector: selectorOf(form), purpose, inputs, submit });
  }

  const inForm = (element: Element) => Boolean(element.closest('form'));
  const buttons = [...document.querySelectorAll('button, [role=button], input[type=button]')]
    .filter((button) => visible(button) && !inForm(button))
    .slice(0, 30)
    .map((button) => ({ selector: selectorOf(button), text: nameOf(button) }));

  const linkOf = (anchor: HTMLAnchorElement): PageLink => ({ selector: selectorOf(anchor), text: nameOf(anchor), href: anchor.href });
  const anchors = [...document.querySelectorAll<HTMLAnchorElement>('a[href]')].filter(
    (anchor) => visible(anchor) && !anchor.href.startsWith('javascript:'),
  );

  // Pagination. A pager: the container whose links are all page numbers or next/previous words,
  // the one holding most of them (then the innermost); else a lone `rel=next` or "Older stories"
  // link; else a "Load more"/"Show more" button; else, on a listing taller than the window, scroll.
  const bare = (text: string) =>
    clean(text)
      .replace(/[›»«‹←→<>|…]+/g, ' ')
      .replace(/\s+/g, ' ')
      .trim();
  const numberWord = /^(?:page )?\d+$/i;
  const nextWord = /^(?:next(?: page)?|older(?: (?:posts|stories|entries|articles|items|results))?|more (?:posts|stories|articles))$/i;
  const backWord = /^(?:prev|previous(?: page)?|newer(?: (?:posts|stories|entries|articles|items|results))?|first|last)$/i;
  const pagerWord = (text: string) => {
    const word = bare(text);
    return numberWord.test(word) || nextWord.test(word) || backWord.test(word);
  };
  const anchorsIn = (container: Element) =>
    [...container.querySelectorAll<HTMLAnchorElement>('a[href]')].filter(
      (anchor) => visible(anchor) && !anchor.href.startsWith('javascript:'),
    );
  const isNext = (anchor: HTMLAnchorElement) => /\bnext\b/i.test(anchor.rel) || nextWord.test(bare(anchor.textContent ?? ''));
  const pagerCandidates = [
    ...document.querySelectorAll('nav, [role=navigation], [class*=pag], [aria-label*=pag i], [data-testid*=pag i], ul, ol, div, p'),
  ].filter((container) => {
    if (!visible(container)) return false;
    const pagerLinks = anchorsIn(container);
    if (!pagerLinks.length || !pagerLinks.every((link) => pagerWord(link.textContent ?? ''))) return false;
    const numbered = pagerLinks.filter((link) => numberWord.test(bare(link.textContent ?? '')));
    const plainNumber = [...container.querySelectorAll('span, strong, em, b, li, [aria-current]')].some(
      (element) => !element.closest('a') && !element.querySelector('a') && numberWord.test(bare(element.textContent ?? '')),
    );
    return numbered.length >= 2 || (numbered.length >= 1 && plainNumber) || pagerLinks.some(isNext);
  });
  const pager =
    pagerCandidates.sort(
      (a, b) => anchorsIn(b).length - anchorsIn(a).length || a.querySelectorAll('*').length - b.querySelectorAll('*').length,
    )[0] ?? null;
  let pagination: PageModel['pagination'] = null;
  /** The element that pages the listing (pager, lone next link, "more" button): no item of it. */
  let pagerControl: Element | null = pager;
  if (pager) {
    const pagerLinks = anchorsIn(pager);
    const numbered = pagerLinks.filter((link) => numberWord.test(bare(link.textContent ?? '')));
    const here = location.href.split('#')[0];
    const currentElement =
      pager.querySelector('[aria-current]:not([aria-current=false])') ??
      [...pager.querySelectorAll('span, strong, em, b, li')].find(
        (element) => !element.closest('a') && !element.querySelector('a') && numberWord.test(bare(element.textContent ?? '')),
      ) ??
      numbered.find((link) => link.href.split('#')[0] === here) ??
      null;
    const next = pagerLinks.find(isNext);
    pagination = {
      kind: 'links',
      selector: within(selectorOf(pager), 'a[href]'),
      current: currentElement ? bare(currentElement.textContent ?? '').replace(/^page /i, '') : null,
      pages: numbered.map(linkOf),
      next: next ? linkOf(next) : null,
    };
  } else {
    const relNext = anchors.filter((anchor) => /\bnext\b/i.test(anchor.rel));
    // A link onwards on its own: "Next", "Older stories", or a "More" that loads another page. A
    // text every item of a list repeats ("more" on each card) leads to the items' pages, not onwards.
    const sameText = (anchor: HTMLAnchorElement) =>
      anchors.filter((other) => bare(other.textContent ?? '') === bare(anchor.textContent ?? '')).length;
    const lone =
      relNext[0] ??
      anchors.find(
        (anchor) =>
          !anchor.closest('nav, header, footer') &&
          sameText(anchor) === 1 &&
          !/^#|^javascript:/.test(anchor.getAttribute('href') ?? '') &&
          (nextWord.test(bare(anchor.textContent ?? '')) || /^more$/i.test(bare(anchor.textContent ?? ''))),
      );
    const moreWord = /^(?:(?:load|show|view|see) )?more(?: \w+)?$|^(?:load|show|view|see) \w+ more$/i;
    const more = [...document.querySelectorAll('button, [role=button], input[type=button], a')]
      .filter((element) => visible(element) && !element.closest('nav, header, footer, form'))
      .filter(
        (element) => !(element instanceof HTMLAnchorElement) || !element.href || /#|javascript:/.test(element.getAttribute('href') ?? '#'),
      )
      .find((element) => moreWord.test(bare(nameOf(element))) && !(element as HTMLButtonElement).disabled);
    pagerControl = lone ?? more ?? null;
    if (lone) {
      pagination = {
        kind: 'links',
        selector: relNext.length === 1 && lone === relNext[0] ? 'a[rel~=next]' : selectorOf(lone),
        current: null,
        pages: [],
        next: linkOf(lone),
      };
    } else if (more) {
      pagination = { kind: 'more', selector: selectorOf(more), current: null, pages: [], next: null };
    } else if (
      document.documentElement.scrollHeight > window.innerHeight + 50 &&
      document.querySelector('table, ul, ol, article, [role=list]')
    ) {
      pagination = { kind: 'scroll', current: null, pages: [], next: null };
    }
  }

  const navigation = [...document.querySelectorAll('nav, [role=navigation]')]
    .filter((nav) => visible(nav) && nav !== pager && !nav.contains(pager ?? null))
    .slice(0, 5)
    .map((nav) => ({
      selector: selectorOf(nav),
      label: clean(nav.getAttribute('aria-label') ?? ''),
      links: [...nav.querySelectorAll<HTMLAnchorElement>('a[href]')].filter(visible).slice(0, 20).map(linkOf),
    }));
  const navAnchors = new Set(navigation.flatMap((nav) => nav.links.map((link) => link.href + link.text)));
  const links = anchors
    .filter((anchor) => !pager?.contains(anchor))
    .map(linkOf)
    .filter((link) => link.text && !navAnchors.has(link.href + link.text))
    .slice(0, maxLinks);

  /** What names an element on the page: its aria-label, or the nearest heading before it. */
  const headingBefore = (element: Element): string | null => {
    const label = element.getAttribute('aria-label') ?? '';
    if (label) return clean(label);
    let node: Element | null = element;
    for (let depth = 0; node && node !== document.body && depth < 4; depth++, node = node.parentElement) {
      for (let sibling = node.previousElementSibling; sibling; sibling = sibling.previousElementSibling) {
        if (/^H[1-6]$/.test(sibling.tagName)) return clean(sibling.textContent);
        const inner = sibling.querySelectorAll('h1, h2, h3, h4, h5, h6');
        if (inner.length) return clean(inner[inner.length - 1]?.textContent);
      }
    }
    return null;
  };

  // Read as `extract.table` reads a table on the browser host (server/browsers/host/nodes/browserNodes.ts),
  // so the headers named here are the keys of its records: keep the two alike.
  const tables = [...document.querySelectorAll('table')].filter(visible).map((table) => {
    const rows = [...table.rows];
    const head = table.tHead ? [...table.tHead.rows] : [];
    const foot = table.tFoot ? [...table.tFoot.rows] : [];
    let body = rows.filter((row) => !head.includes(row) && !foot.includes(row));
    // A row that starts with a row header (`<th scope=row>`) and holds data is a data row, not the header.
    const rowHeaded = (row: HTMLTableRowElement) =>
      row.cells[0]?.tagName === 'TH' && [...row.cells].slice(1).some((cell) => cell.tagName === 'TD');
    let header = head.at(-1);
    if (!header && body[0] && !rowHeaded(body[0])) {
      header = body[0];
      body = body.slice(1);
    }
    // Data rows hold a <td>: a group's heading row (`<th colspan=3>Europe</th>`) between tbodies is none.
    const data = body.filter((row) => [...row.cells].some((cell) => cell.tagName === 'TD'));
    // biome-ignore lint/performance/useDomNodeTextContent: the rendered text, as extract.table reads it
    const texts = header ? [...header.cells].map((cell) => clean((cell as HTMLElement).innerText ?? cell.textContent)) : [];
    const width = Math.max(texts.length, ...data.map((row) => row.cells.length));
    const headers: string[] = [];
    for (let index = 0; index < width; index++) {
      const base = texts[index] || `column${index + 1}`;
      let key = base;
      for (let n = 2; headers.includes(key); n++) key = `${base}_${n}`;
      headers.push(key);
    }
    // A column where every data row (of two or more, in tbodies) holds one link: each row's own page.
    const tableSelector = selectorOf(table);
    let rowLink: { linkSelector: string; linkSample: string } | undefined;
    const inBodies = data.every((row) => row.parentElement?.tagName === 'TBODY' && !head.includes(row));
    for (let index = 0; data.length >= 2 && inBodies && !rowLink && index < width; index++) {
      const anchors = data.map((row) => row.cells[index]?.querySelectorAll('a[href]'));
      if (anchors.every((found) => found?.length === 1)) {
        const hrefs = anchors.map((found) => (found?.[0] as HTMLAnchorElement | undefined)?.href ?? '');
        // Only the data rows' links: none in a header or group row the selector would match too.
        const matched = table.querySelectorAll(`:scope > tbody > tr > :nth-child(${index + 1}) a[href]`).length;
        if (matched === data.length && new Set(hrefs).size === hrefs.length && hrefs.every((href) => /^https?:/.test(href)))
          rowLink = { linkSelector: `${tableSelector} > tbody > tr > :nth-child(${index + 1}) a[href]`, linkSample: hrefs[0] as string };
      }
    }
    return {
      selector: tableSelector,
      caption: table.caption ? clean(table.caption.textContent) : null,
      heading: headingBefore(table),
      headers,
      rowCount: data.length,
      ...(rowLink ?? {}),
    };
  });

  // Repeated lists or cards: a container with 3+ children of the same tag holding text.
  const lists: PageList[] = [];
  const seen = new Set<Element>();
  for (const container of document.querySelectorAll('ul, ol, dl, main, section, div, [role=list]')) {
    if (!visible(container) || container.closest('nav, form, table') || container === pager || pager?.contains(container)) continue;
    // A pager or "more" control among the items (`<article>…<article><a rel=next>`) is none of them.
    const control = (child: Element) =>
      Boolean(
        pagerControl &&
          (child === pagerControl || (child.contains(pagerControl) && clean(child.textContent) === clean(pagerControl.textContent))),
      );
    const children = [...container.children].filter((child) => visible(child) && !control(child));
    // Three items, or two with some structure each (a paged list may show two per page).
    if (children.length < 2 || (children.length === 2 && children.some((child) => child.children.length < 2))) continue;
    const first = children[0] as Element;
    const tag = first.tagName;
    if (!children.every((child) => child.tagName === tag)) continue;
    if (/^H[1-6]$|^P$|^SPAN$|^A$|^BR$/.test(tag)) continue;
    if (children.some((child) => seen.has(child))) continue;
    // Items with some structure: a heading, a link or several text parts.
    const structured = children.filter((child) => child.children.length >= 1 && clean(child.textContent).length > 0);
    if (structured.length < children.length * 0.8) continue;
    for (const child of children) seen.add(child);
    const containerSelector = selectorOf(container);
    const itemTag = tag.toLowerCase();
    // `<article>`s that are all the page has are named by their tag alone: a container without a
    // name of its own (`main`, a wrapper) may change in a redesign, the articles stay.
    const onlyArticles = tag === 'ARTICLE' && document.querySelectorAll('article').length === children.length;
    const itemSelector = onlyArticles
      ? 'article'
      : /^(role|text|internal:)/.test(containerSelector)
        ? `${containerSelector} >> :scope > ${itemTag}`
        : `${containerSelector} > ${itemTag}`;
    // Fields: the parts of the first item that every item has, by a selector inside the item.
    const fields: ListField[] = [];
    const used = new Set<string>();
    const fieldSelector = (element: Element) => {
      const testId = element.getAttribute('data-testid');
      if (testId) return `[data-testid=${quote(testId)}]`;
      const itemprop = element.getAttribute('itemprop');
      if (itemprop) return `[itemprop=${quote(itemprop)}]`;
      const elementTag = element.tagName.toLowerCase();
      if (first.querySelectorAll(elementTag).length === 1) return elementTag;
      const className = [...element.classList][0];
      if (className && first.querySelectorAll(`.${CSS.escape(className)}`).length === 1) return `.${CSS.escape(className)}`;
      // Its place in the item, tag by tag (`:scope > p:nth-of-type(2) > span`).
      const path: string[] = [];
      for (let node: Element | null = element; node && node !== first; node = node.parentElement) {
        const current = node;
        const same = [...(current.parentElement?.children ?? [])].filter((other) => other.tagName === current.tagName);
        path.unshift(
          same.length > 1 ? `${current.tagName.toLowerCase()}:nth-of-type(${same.indexOf(current) + 1})` : current.tagName.toLowerCase(),
        );
      }
      return `:scope > ${path.join(' > ')}`;
    };
    // A field is named by what a reader sees, never by its classes (`a`, `t`, `css-1x2y` say nothing).
    const isLabel = (text: string) => /^[\p{L}][\p{L}\p{N} _/-]{0,30}:$/u.test(text);
    const labelBefore = (element: Element) => {
      if (element.tagName === 'DD') {
        const term = element.previousElementSibling;
        return term?.tagName === 'DT' ? clean(term.textContent) : '';
      }
      // "Price:" as the text just before it: a text node or an element of its own.
      let node: Node | null = element.previousSibling;
      while (node && node.nodeType === 3 && !clean(node.textContent)) node = node.previousSibling;
      const before = clean(node?.textContent);
      if (node && isLabel(before)) return before.slice(0, -1);
      const previous = element.previousElementSibling;
      if (previous && constantLabel(previous)) return clean(previous.textContent);
      // The label as the start of its own text: `Price: $3`.
      const own = [...element.childNodes].find((child) => child.nodeType === 3 && clean(child.textContent));
      return /^([\p{L}][\p{L}\p{N} _/-]{0,30}):\s*\S/u.exec(clean(own?.textContent))?.[1] ?? '';
    };
    // A label without a colon: a short text every item repeats word for word, just before a value
    // that differs from item to item (`<span>Author</span> <span>Frank Herbert</span>`).
    const valuesAt = (selector: string) => children.map((child) => clean(child.querySelector(selector)?.textContent));
    const constantLabel = (element: Element) => {
      const text = clean(element.textContent);
      const next = element.nextElementSibling;
      if (children.length < 2 || element.children.length || !next || !/^[\p{L}][\p{L}\p{N} _/-]{0,30}$/u.test(text)) return false;
      const labels = valuesAt(fieldSelector(element));
      const values = valuesAt(fieldSelector(next));
      return labels.every((label) => label === text) && values.every(Boolean) && new Set(values).size > 1;
    };
    /** A name for what the text is, when nothing labels it. */
    const shapeOf = (element: Element, text: string) => {
      if (element.tagName === 'TIME' || /^\d{4}-\d{2}-\d{2}|\b(ago|yesterday|today)$/i.test(text)) return 'date';
      if (/^(?:[$€£¥]|[A-Z]{3}\s)\s?\d|^\d[\d,.]*\s?(?:[$€£¥]|EUR|USD|GBP|kr)$/.test(text)) return 'price';
      if (/^by\s+\S/i.test(text)) return 'author';
      const unit = /^\d[\d,.]*\s+(\p{L}{2,20})$/u.exec(text)?.[1];
      if (unit) return unit.toLowerCase();
      if (/^[-+]?\d[\d,.]*%?$/.test(text)) return 'number';
      return null;
    };
    const hasHeading = Boolean(first.querySelector('h1, h2, h3, h4, h5, h6'));
    const fieldName = (element: Element, text: string) => {
      const hint =
        element.getAttribute('data-testid') ||
        element.getAttribute('itemprop') ||
        element.getAttribute('aria-label') ||
        labelBefore(element) ||
        (/^H[1-6]$/.test(element.tagName) ? 'title' : '') ||
        // Bold text that opens an item without a heading is its title.
        (!hasHeading && /^(?:B|STRONG)$/.test(element.tagName) && !fields.length ? 'title' : '') ||
        (element.tagName === 'A' ? (hasHeading ? 'link' : 'title') : '') ||
        shapeOf(element, text) ||
        'text';
      return (
        hint
          .replace(/([a-z])([A-Z])/g, '$1_$2')
          .toLowerCase()
          .replace(/[^a-z0-9_]+/g, '_')
          .replace(/^_+|_+$/g, '')
          .replace(/^([0-9])/, '_$1')
          .slice(0, 40) || 'text'
      );
    };
    for (const element of first.querySelectorAll('*')) {
      if (fields.length >= 8) break;
      const text = clean(element.textContent);
      const ownText = [...element.childNodes].some((node) => node.nodeType === 3 && clean(node.textContent));
      if (!ownText && element.tagName !== 'A') continue;
      // A label ("Price:", a <dt>) names the value after it; it is no field of its own, nor is
      // an element whose own text is only such a label (`<span>Score: <b>42</b></span>`).
      const own = clean([...element.childNodes].map((node) => (node.nodeType === 3 ? node.textContent : ' ')).join(' '));
      if (element.tagName === 'DT' || isLabel(text) || isLabel(own) || constantLabel(element)) continue;
      const selector = fieldSelector(element);
      if (!selector || used.has(selector)) continue;
      if (!children.every((child) => child.querySelector(selector))) continue;
      used.add(selector);
      let name = fieldName(element, text);
      for (let n = 2; fields.some((field) => field.name === name); n++) name = `${name.replace(/_\d+$/, '')}_${n}`;
      fields.push({ name, selector, sample: text });
      if (element.tagName === 'A') {
        let url = name === 'title' ? 'url' : `${name}_url`;
        for (let n = 2; fields.some((field) => field.name === url); n++) url = `${url.replace(/_\d+$/, '')}_${n}`;
        fields.push({ name: url, selector, attribute: 'href', sample: (element as HTMLAnchorElement).href });
      }
    }
    const link = fields.find((field) => field.attribute === 'href');
    if (fields.length) {
      lists.push({
        selector: containerSelector,
        itemSelector,
        count: children.length,
        fields,
        heading: headingBefore(container),
        ...(link ? { linkSelector: within(itemSelector, link.selector) } : {}),
      });
    }
    if (lists.length >= 8) break;
  }

  // A detail page's labelled values: <dl> entries, then elements a test id or itemprop names.
  const details: PageDetail[] = [];
  const fieldKey = (text: string) =>
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .replace(/^([0-9])/, '_$1')
      .slice(0, 40);
  const addDetail = (label: string, value: Element) => {
    const name = fieldKey(label);
    if (name && details.length < 20 && !details.some((detail) => detail.name === name))
      details.push({ name, selector: selectorOf(value), sample: clean(value.textContent) });
  };
  // Values inside a repeated list's items are its records' fields, not the page's.
  const inRecords = (element: Element) => seen.has(element) || [...seen].some((item) => item.contains(element));
  for (const term of document.querySelectorAll('dl dt')) {
    const value = term.nextElementSibling;
    if (value?.tagName !== 'DD' || !visible(value) || inRecords(term)) continue;
    addDetail(clean(term.textContent), value);
  }
  // A table of row headers, one value each: `<tr><th>Price</th><td>3</td></tr>`.
  for (const row of document.querySelectorAll('tr')) {
    const cells = [...(row as HTMLTableRowElement).cells];
    if (cells.length === 2 && cells[0]?.tagName === 'TH' && cells[1]?.tagName === 'TD' && visible(row))
      addDetail(clean(cells[0].textContent), cells[1]);
  }
  // A value after its label: `<b>Price:</b> <span>3</span>`, `Price: <span>3</span>`.
  for (const element of document.querySelectorAll('body *')) {
    if (details.length >= 20) break;
    if (element.children.length || !clean(element.textContent) || element.closest('form, table, nav, dl, script, style')) continue;
    if (inRecords(element) || !visible(element)) continue;
    let node: Node | null = element.previousSibling;
    while (node && node.nodeType === 3 && !clean(node.textContent)) node = node.previousSibling;
    const label = clean(node?.textContent);
    if (node && /^[\p{L}][\p{L}\p{N} _/-]{0,30}:$/u.test(label)) addDetail(label.slice(0, -1), element);
  }
  for (const element of document.querySelectorAll('[itemprop], [data-testid]')) {
    if (details.length >= 20) break;
    if (element.closest('form, table, nav') || inRecords(element) || !visible(element)) continue;
    if (element.children.length > 2 || !clean(element.textContent)) continue;
    const name = fieldKey(element.getAttribute('itemprop') ?? element.getAttribute('data-testid') ?? '');
    if (name && !details.some((detail) => detail.name === name))
      details.push({ name, selector: selectorOf(element), sample: clean(element.textContent) });
  }

  return {
    url: location.href,
    title: clean(document.title),
    headings,
    forms,
    buttons,
    links,
    navigation,
    pagination,
    tables,
    lists,
    details,
  };
}
