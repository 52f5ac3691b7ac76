import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inPage, type Parts } from '../../server/agents/page/collect/inPage.ts';
import { evaluateIsolated } from '../../server/browsers/page/isolatedWorld.ts';
import { openServedPage } from '../support/servedPage.ts';

/**
 * The page model's in-page parts on real pages in Chromium, run as the host runs them: put together
 * into one function (`inPage`) and called in the host's isolated world. Each read below is sent to
 * the page as its text, so it uses only the parts and its argument.
 */

let served: Awaited<ReturnType<typeof openServedPage>>;

beforeAll(async () => {
  served = await openServedPage('/page', (body) => `<!doctype html><title>Parts</title><body>${body}</body>`);
}, 60_000);
afterAll(() => served?.close());

/** Serves `html`, opens it and runs `read` in its isolated world. */
async function readIn<R>(html: string, read: (parts: Parts) => R): Promise<R> {
  await served.show(html);
  return evaluateIsolated(served.page, inPage(read));
}

/** The selector each `[data-case]` element gets, by its case. */
function selectorsOf(html: string): Promise<Record<string, string>> {
  return readIn(html, ({ selectorOf }) =>
    Object.fromEntries(
      [...document.querySelectorAll('[data-case]')].map((element) => [element.getAttribute('data-case') ?? '', selectorOf(element)]),
    ),
  );
}

describe('selectors of the page model', () => {
  it('a test id, a stable id, a name, then a role with its exact name, each matching the element alone', async () => {
    const selectors = await selectorsOf(`
      <button data-testid="save" data-case="testid">Save</button>
      <div data-test-id="panel" data-case="test-id">Panel</div>
      <span data-test="badge" data-case="test">New</span>
      <input id="email" data-case="id">
      <input id="field-123456" name="q" data-case="generated-id">
      <form name="signup" data-case="form-name"><input name="nick"></form>
      <a href="/about" data-case="role">About us</a>
      <table aria-label="Opening hours" data-case="table"><tr><td>Mon</td></tr></table>`);
    expect(selectors).toEqual({
      testid: '[data-testid="save"]',
      'test-id': '[data-test-id="panel"]',
      test: '[data-test="badge"]',
      id: '#email',
      'generated-id': 'input[name="q"]',
      'form-name': 'form[name="signup"]',
      role: 'role=link[name="About us"s]',
      table: 'role=table[name="Opening hours"s]',
    });
    for (const [name, selector] of Object.entries(selectors)) {
      const found = served.page.locator(selector);
      expect(await found.count(), name).toBe(1);
      expect(await found.getAttribute('data-case'), name).toBe(name);
    }
  });

  it('elements alike are named by the shortest path of tags that is still theirs alone, from an anchor with an id', async () => {
    const selectors = await selectorsOf(`
      <div id="results"><ul>
        <li><a href="/1">Read</a></li><li><a href="/2" data-case="second">Read</a></li>
      </ul></div>
      <section data-testid="more"><p>x</p><p><a href="/3" data-case="in-test-id">Read</a></p></section>
      <div id="row-98765"><p><span>Open</span></p><p><span data-case="generated-anchor">Open</span></p></div>`);
    expect(selectors).toEqual({
      second: 'li:nth-of-type(2) > a',
      'in-test-id': 'p:nth-of-type(2) > a',
      'generated-anchor': 'p:nth-of-type(2) > span',
    });
    for (const [name, selector] of Object.entries(selectors)) {
      expect(await served.page.locator(selector).getAttribute('data-case'), name).toBe(name);
    }
  });
});

describe('names, roles and visibility', () => {
  it('a field is labelled by aria-label, aria-labelledby, its label, a wrapping label, then placeholder or title', async () => {
    const labels = await readIn(
      `<input data-case aria-label="  Your  e-mail ">
       <span id="a">Billing</span><span id="b">address</span><input data-case aria-labelledby="a b">
       <label for="zip">Post code</label><input data-case id="zip">
       <label>City <input data-case></label>
       <input data-case placeholder="Search the shop">
       <input data-case title="Quantity">
       <input data-case>`,
      ({ labelOf }) => [...document.querySelectorAll('[data-case]')].map(labelOf),
    );
    expect(labels).toEqual(['Your e-mail', 'Billing address', 'Post code', 'City', 'Search the shop', 'Quantity', '']);
  });

  it('roles come from role or the tag; names from the value of a submit, the caption of a table, else the text', async () => {
    const read = await readIn(
      `<nav data-case></nav><a data-case href="/">Home</a><div data-case role="tab">Tab</div>
       <input data-case type="submit" value="Send now"><input data-case type="checkbox"><input data-case type="search" placeholder="Find">
       <textarea data-case aria-label="Notes"></textarea><select data-case aria-label="Size"></select>
       <table data-case><caption>Prices</caption><tr><td>3</td></tr></table><p data-case>Plain</p>`,
      ({ roleOf, nameOf }) => [...document.querySelectorAll('[data-case]')].map((element) => [roleOf(element), nameOf(element)]),
    );
    expect(read).toEqual([
      ['navigation', ''],
      ['link', 'Home'],
      ['tab', 'Tab'],
      ['button', 'Send now'],
      ['checkbox', ''],
      ['searchbox', 'Find'],
      ['textbox', 'Notes'],
      ['combobox', 'Size'],
      ['table', 'Prices'],
      [null, 'Plain'],
    ]);
  });

  it('hidden, undisplayed and empty elements are not visible', async () => {
    const read = await readIn(
      `<p data-case>Shown</p><p data-case style="display:none">None</p><p data-case style="visibility:hidden">Hidden</p>
       <div data-case></div><div style="display:none"><p data-case>Inside</p></div>`,
      ({ visible }) => [...document.querySelectorAll('[data-case]')].map(visible),
    );
    expect(read).toEqual([true, false, false, false, false]);
  });

  it('a table or list is named by its aria-label, else the nearest heading before it, up to four levels up', async () => {
    const read = await readIn(
      `<ul data-case aria-label="Latest"></ul>
       <h2>Orders</h2><p>intro</p><table data-case></table>
       <div><header><h3>Inner</h3></header></div><ol data-case></ol>
       <section><h2>Outer</h2><div><div><ul data-case></ul></div></div></section>
       <section><h2>Too far</h2><div><div><div><div><ul data-case></ul></div></div></div></div></section>`,
      ({ headingBefore }) => {
        document.body.prepend(Object.assign(document.createElement('ul'), { id: 'first' }));
        return [...document.querySelectorAll('[data-case]'), document.getElementById('first') as Element].map(headingBefore);
      },
    );
    expect(read).toEqual(['Latest', 'Orders', 'Inner', 'Outer', null, null]);
  });
});

describe('forms, tables, lists and details as the page shows them', () => {
  it('a form lists its visible fields and submit buttons, and whether a field holds a value, never the value', async () => {
    await served.show(`<form action="/session"><label>E-mail <input name="mail" type="email" required></label>
      <input type="password" name="pass" aria-required="true"><input type="hidden" name="csrf" value="t0k3n">
      <input name="gone" style="display:none"><select name="lang"><option>en</option></select>
      <button type="button">Show password</button><button>Sign in</button></form>`);
    await served.page.fill('input[name=pass]', 'Typed-Secret-991');
    const forms = await evaluateIsolated(
      served.page,
      inPage(({ readForms }) => readForms()),
    );
    expect(JSON.stringify(forms)).not.toContain('Typed-Secret-991');
    expect(forms).toEqual([
      {
        selector: 'form',
        purpose: 'login',
        inputs: [
          { selector: 'input[name="mail"]', label: 'E-mail', type: 'email', name: 'mail', required: true, filled: false },
          { selector: 'input[name="pass"]', label: '', type: 'password', name: 'pass', required: true, filled: true },
          // A select's options are the page's own text, so one the request names can be chosen.
          {
            selector: 'select[name="lang"]',
            label: '',
            type: 'select',
            name: 'lang',
            required: false,
            filled: true,
            options: [{ value: 'en', text: 'en' }],
          },
        ],
        submit: [{ selector: 'role=button[name="Sign in"s]', text: 'Sign in' }],
      },
    ]);
  });

  it("a table's keys are its last header row's cells; its rows are the tbodies' data rows, each with its own page's link", async () => {
    const tables = await readIn(
      `<h2>Staff</h2><table id="staff"><thead><tr><th colspan="3">People</th></tr><tr><th>Name</th><th></th><th>Name</th></tr></thead>
         <tbody><tr><td><a href="/p/1">Ada</a></td><td>x</td><td>1</td></tr><tr><td><a href="/p/2">Bob</a></td><td>y</td><td>2</td></tr></tbody>
         <tbody><tr><th colspan="3">Group</th></tr><tr><td><a href="/p/3">Cy</a></td><td>z</td><td>3</td></tr></tbody>
         <tfoot><tr><td>Total</td><td></td><td>6</td></tr></tfoot></table>
       <table aria-label="Scores"><tr><th scope="row">Ada</th><td>1</td></tr><tr><th scope="row">Bob</th><td>2</td></tr></table>
       <table id="plain"><tr><td>Day</td><td>Hours</td></tr><tr><td>Mon</td><td>9-5</td></tr></table>`,
      ({ readTables }) => readTables(),
    );
    expect(tables).toEqual([
      {
        selector: '#staff',
        caption: null,
        heading: 'Staff',
        headers: ['Name', 'column2', 'Name_2'],
        rowCount: 3,
        linkSelector: '#staff > tbody > tr > :nth-child(1) a[href]',
        linkSample: `${served.url}/p/1`,
      },
      // A first row that starts with a row header is data: no header, the keys by place.
      { selector: 'role=table[name="Scores"s]', caption: null, heading: 'Scores', headers: ['column1', 'column2'], rowCount: 2 },
      { selector: '#plain', caption: null, heading: 'Staff', headers: ['Day', 'Hours'], rowCount: 1 },
    ]);
    expect(await served.page.locator((tables[0] as { linkSelector: string }).linkSelector).count()).toBe(3);
  });

  it("a list's fields are named by their labels, headings and shapes, and each link gives its address too", async () => {
    const books = [
      ['Dune', 'Frank Herbert', '$9.99', '412 pages'],
      ['Emma', 'Jane Austen', '$5.50', '320 pages'],
      ['Ulysses', 'James Joyce', '$12.00', '730 pages'],
    ];
    const { lists } = await readIn(
      `<h2>Books</h2><ul id="books">${books
        .map(
          ([title, author, price, pages]) =>
            `<li><h3><a href="/b/${title}">${title}</a></h3><span class="k">Author</span> <span class="v">${author}</span>
             <p>Price: <b>${price}</b></p><em>${pages}</em></li>`,
        )
        .join('')}<li><a rel="next" href="/books?page=2">Next</a></li></ul>`,
      ({ readPagination, readLists, visibleAnchors }) => {
        const { pager, control } = readPagination(visibleAnchors(document));
        return readLists(pager, control);
      },
    );
    expect(lists).toEqual([
      {
        selector: '#books',
        itemSelector: '#books > li',
        count: 3,
        heading: 'Books',
        linkSelector: '#books > li a',
        fields: [
          { name: 'link', selector: 'a', sample: 'Dune' },
          { name: 'link_url', selector: 'a', attribute: 'href', sample: `${served.url}/b/Dune` },
          // Its place in the item, not its class: a redesign renames classes.
          { name: 'author', selector: ':scope > span:nth-of-type(2)', sample: 'Frank Herbert' },
          { name: 'price', selector: 'b', sample: '$9.99' },
          { name: 'pages', selector: 'em', sample: '412 pages' },
        ],
      },
    ]);
  });

  it('a field is found by its place in the item, by a class only when the items differ in their places', async () => {
    const { lists } = await readIn(
      `<ul id="a"><li><span class="t">One</span> <span class="p">£1</span></li><li><span class="t">Two</span> <span class="p">£2</span></li><li><span class="t">Three</span> <span class="p">£3</span></li></ul>
       <ul id="b"><li><span class="t">One</span> <span class="p">£1</span></li><li><i>new</i><span class="t">Two</span> <span class="p">£2</span></li><li><span class="t">Three</span> <span class="p">£3</span></li></ul>`,
      ({ readLists }) => readLists(null, null),
    );
    // Two lists alike without headings of their own are two lists, not groups of one.
    expect(lists.map((list) => list.fields.map((field) => field.selector))).toEqual([
      [':scope > span:nth-of-type(1)', ':scope > span:nth-of-type(2)'],
      [':scope > span:nth-of-type(1)', ':scope > span:nth-of-type(2)'],
    ]);
    const { lists: shifted } = await readIn(
      `<ul id="c"><li><b>One</b> <span class="x">sale</span> <span class="p">£1</span></li><li><b>Two</b> <span class="p">£2</span></li><li><b>Three</b> <span class="p">£3</span></li></ul>`,
      ({ readLists }) => readLists(null, null),
    );
    // The price is the second span of one item and the first of another: only its class picks it out.
    expect(shifted[0]?.fields.map((field) => field.selector)).toEqual(['b', '.p']);
  });

  it('a property of a nested microdata item is named and picked through that item’s own property', async () => {
    const events = ['Fair', 'Quiz', 'Gig'];
    const { lists } = await readIn(
      `<ul aria-label="Events">${events
        .map(
          (name, i) =>
            `<li itemscope itemtype="https://schema.org/Event"><span itemprop="name">${name}</span><time itemprop="startDate">${i + 1} May</time><div itemprop="location" itemscope><span itemprop="name">Hall ${i}</span></div></li>`,
        )
        .join('')}</ul>`,
      ({ readLists }) => readLists(null, null),
    );
    expect(lists[0]?.fields).toEqual([
      { name: 'name', selector: '[itemprop="name"]', sample: 'Fair' },
      { name: 'start_date', selector: '[itemprop="startDate"]', sample: '1 May' },
      { name: 'location', selector: '[itemprop="location"] [itemprop="name"]', sample: 'Hall 0' },
    ]);
  });

  it('lists of the same items under their own headings are read as one list too; a group in each card is not', async () => {
    const groups = [
      ['Languages', ['Spanish', 'French', 'Italian']],
      ['Crafts', ['Pottery', 'Drawing']],
    ] as const;
    const { lists } = await readIn(
      `<h1>Classes</h1><div>${groups
        .map(
          ([group, names], i) =>
            `<h2>${group}</h2><div id="g${i}"><ul>${names.map((name) => `<li><span>${name}</span> <span>£${name.length}</span></li>`).join('')}</ul></div>`,
        )
        .join('')}</div>`,
      ({ readLists }) => readLists(null, null),
    );
    const union = '#g0 > ul, #g1 > ul';
    expect(lists.map((list) => [list.selector, list.itemSelector, list.count, list.heading, list.groupOf])).toEqual([
      ['#g0 > ul', '#g0 > ul > li', 3, 'Languages', union],
      ['#g1 > ul', '#g1 > ul > li', 2, 'Crafts', union],
      [union, '#g0 > ul > li, #g1 > ul > li', 5, 'Classes', undefined],
    ]);
    expect(await served.page.locator(lists[2]?.itemSelector ?? '').count()).toBe(5);
    // One definition list in each card: the cards are the records, and their rows no list of lists.
    const { lists: cards } = await readIn(
      `<div id="plans">${['Basic', 'Plus', 'Max']
        .map(
          (plan) =>
            `<section><h3>${plan}</h3><dl><div><dt>Fee</dt><dd>£${plan.length}</dd></div><div><dt>Data</dt><dd>${plan.length} GB</dd></div></dl></section>`,
        )
        .join('')}</div>`,
      ({ readLists }) => readLists(null, null),
    );
    expect(cards.filter((list) => list.groupOf || list.selector.includes(','))).toEqual([]);
  });

  it('the details of a page are its labelled values outside any list', async () => {
    const details = await readIn(
      `<h1>Chair</h1><dl><dt>Colour</dt><dd>Red</dd><dt>Colour</dt><dd>Blue</dd></dl>
       <table><tr><th>Weight</th><td>3 kg</td></tr></table>
       <p><b>Maker:</b> <span>Acme</span></p><p>In stock: <span>12</span></p>
       <span itemprop="sku" id="sku">A-1</span>
       <ul><li><h3>One</h3><p>Price: <b>1</b></p></li><li><h3>Two</h3><p>Price: <b>2</b></p></li><li><h3>Three</h3><p>Price: <b>3</b></p></li></ul>`,
      ({ readLists, readDetails }) => readDetails(readLists(null, null).seen),
    );
    expect(details).toEqual([
      { name: 'colour', selector: 'dd:nth-of-type(1)', sample: 'Red' },
      { name: 'weight', selector: 'td', sample: '3 kg' },
      { name: 'maker', selector: 'p:nth-of-type(1) > span', sample: 'Acme' },
      { name: 'in_stock', selector: 'p:nth-of-type(2) > span', sample: '12' },
      { name: 'sku', selector: '#sku', sample: 'A-1' },
    ]);
  });
});

describe('what pages a listing', () => {
  it('the pager is the container holding most pager links, then the innermost; links and lists leave it out', async () => {
    const model = await readIn(
      `<ul class="items"><li><h3>A</h3><p>a</p></li><li><h3>B</h3><p>b</p></li><li><h3>C</h3><p>c</p></li></ul>
       <div class="outer"><nav class="pages" aria-label="Pages"><a href="?page=1">1</a><b>2</b><a href="?page=3">3</a><a href="?page=3">Next</a></nav></div>
       <p><a href="/about">About</a></p>`,
      ({ collectPageModel }) => collectPageModel(),
    );
    expect(model.pagination).toMatchObject({ kind: 'links', selector: 'role=navigation[name="Pages"s] >> a[href]', current: '2' });
    expect(model.pagination?.pages.map((link) => link.text)).toEqual(['1', '3']);
    expect(model.navigation).toEqual([]);
    expect(model.links.map((link) => link.text)).toEqual(['About']);
  });

  it('a "more" every card repeats is no pager; a disabled "Load more" button is none either', async () => {
    const read = await readIn(
      `<div class="cards">${['A', 'B', 'C'].map((name) => `<div><h3>${name}</h3><a href="/c/${name}">More</a></div>`).join('')}</div>
       <button disabled>Load more</button>`,
      ({ visibleAnchors, loneNextLink, moreButton }) => [loneNextLink(visibleAnchors(document)) ?? null, moreButton() ?? null].map(Boolean),
    );
    expect(read).toEqual([false, false]);
  });
});
