import { describe, expect, it } from 'vitest';
import type { GenerationJob } from '../../db/entities/index.ts';
import { unverifiedBecause } from '../../server/agents/model/jobs.ts';
import { checkOutputs, declarationsFor, pagesShowed, singleValueForRecords } from '../../server/agents/model/outputCheck.ts';
import { requestFitProblems } from '../../server/agents/model/requestFit.ts';
import { asksForRecords } from '../../server/agents/model/requestReading.ts';
import type { PageModel } from '../../server/agents/page/pageModel.ts';
import type { Proposal } from '../../server/agents/proposal.ts';

const page = (url: string, parts: Partial<PageModel>): PageModel => ({
  url,
  title: 'Orders',
  headings: [],
  forms: [],
  buttons: [],
  links: [],
  navigation: [],
  pagination: null,
  tables: [],
  lists: [],
  details: [],
  ...parts,
});

const ordersTable = (rowCount: number) => ({
  selector: '#orders',
  caption: 'Orders',
  heading: null,
  headers: ['Id', 'Total', 'Status', ''],
  rowCount,
});
const storiesList = (count: number) => ({
  selector: '#stories',
  itemSelector: '#stories > li',
  count,
  fields: [
    { name: 'title', selector: 'h3', sample: 'A' },
    { name: 'points', selector: '.points', sample: '3' },
  ],
});

const proposal = (steps: Proposal['steps'], outputs: Proposal['outputs'] = []): Proposal => ({
  goal: 'the data',
  startUrl: 'http://shop.test/orders',
  steps: [{ action: 'goto', url: 'http://shop.test/orders', evidence: 'start' }, ...steps],
  parameters: [],
  outputs,
  risks: [],
});

describe('what a proposal promises its outputs are', () => {
  it('a table read on three pages promises its header fields and the rows of every page the analysis saw', () => {
    const seen = [
      page('http://shop.test/orders', { tables: [ordersTable(5)] }),
      page('http://shop.test/orders?page=2', { tables: [ordersTable(5)] }),
      // The same page read twice (before and after a wait) counts once, at its largest.
      page('http://shop.test/orders?page=3', { tables: [ordersTable(3)] }),
      page('http://shop.test/orders?page=3#top', { tables: [ordersTable(4)] }),
    ];
    const declared = declarationsFor(
      proposal(
        [
          {
            action: 'extract_table',
            selector: '#orders',
            output: 'orders',
            paging: { kind: 'links', selector: 'a.page' },
            evidence: 'the table',
          },
        ],
        [{ name: 'orders', description: 'every order', count: 2 }],
      ),
      seen,
    );
    expect(declared).toEqual([
      { name: 'orders', description: 'every order', kind: 'records', fields: ['Id', 'Total', 'Status'], count: 14 },
    ]);
  });

  it('the model may promise more than the pages showed, never less; a heading is a value', () => {
    const seen = [page('http://news.test/', { lists: [storiesList(3)] })];
    const declared = declarationsFor(
      proposal(
        [
          {
            action: 'extract_list',
            selector: '#stories > li',
            fields: [
              { name: 'title', selector: 'h3' },
              { name: 'points', selector: '.points' },
            ],
            output: 'stories',
            evidence: 'the list',
          },
          { action: 'extract_text', selector: 'h1', output: 'heading', evidence: 'the heading' },
        ],
        [{ name: 'stories', description: 'the stories', kind: 'value', fields: ['author'], count: 30 }],
      ),
      seen,
    );
    expect(declared).toEqual([
      { name: 'stories', description: 'the stories', kind: 'records', fields: ['title', 'points', 'author'], count: 30 },
      { name: 'heading', description: 'the heading', kind: 'value' },
    ]);
  });

  it('detail pages reached from a list promise one record per link', () => {
    const seen = [page('http://shop.test/', { lists: [{ ...storiesList(4), linkSelector: '#stories > li a' }] })];
    const [declared] = declarationsFor(
      proposal([
        {
          action: 'extract_fields',
          selector: 'main',
          pagesSelector: '#stories > li a',
          fields: [{ name: 'name', selector: 'h1' }],
          output: 'products',
          evidence: 'the product pages',
        },
      ]),
      seen,
    );
    expect(declared).toMatchObject({ name: 'products', kind: 'records', fields: ['name'], count: 4 });
  });
});

describe('a dry run checked against the declarations', () => {
  const orders = { name: 'orders', description: '', kind: 'records' as const, fields: ['Id', 'Total'], count: 3 };
  const title = { name: 'title', description: '', kind: 'value' as const };

  it('the promised records pass', () => {
    const result = { orders: [1, 2, 3].map((Id) => ({ Id, Total: '$5' })), title: 'Orders' };
    expect(checkOutputs([orders, title], result)).toEqual([]);
  });

  it('names each way a result differs', () => {
    expect(checkOutputs([orders], { orders: 'Your orders' })).toEqual([
      {
        output: 'orders',
        kind: 'not_records',
        message:
          'orders: a single value ("Your orders") where a list of records was declared; the analysis saw 3 across the pages it visited',
      },
    ]);
    expect(checkOutputs([orders], { orders: [] }).map((m) => m.message)).toEqual([
      'orders: an empty list; the analysis saw 3 across the pages it visited',
    ]);
    expect(checkOutputs([orders], { orders: [{ Id: 1, Total: null }, { Id: 2 }] }).map((m) => m.message)).toEqual([
      'orders: 2 record(s) where the analysis saw 3 across the pages it visited',
      'orders: the field "Total" is empty in every record',
    ]);
    expect(checkOutputs([orders], { orders: [{ a: 1 }, { a: 2 }, { a: 3 }] }).map((m) => m.kind)).toEqual([
      'missing_field',
      'missing_field',
    ]);
    expect(checkOutputs([orders, title], { title: ' ' }).map((m) => m.message)).toEqual([
      'orders: the result has no such output',
      'title: the value is empty',
    ]);
    expect(checkOutputs([orders], null).map((m) => m.kind)).toEqual(['missing_output']);
  });

  it('a field no label named that holds the same text in every record is a label, not data', () => {
    const picks = { name: 'picks', description: '', kind: 'records' as const, fields: ['text', 'text_2', 'text_3'], count: 3 };
    const books = ['Dune', 'Emma', 'Ubik'].map((text, index) => ({ text, text_2: 'Author', text_3: `Writer ${index}` }));
    expect(checkOutputs([picks], { picks: books })).toEqual([
      {
        output: 'picks',
        kind: 'label_field',
        message: `picks: the field "text_2" holds "Author" in every record: a label or a button's text, not data`,
      },
    ]);
    // Named by a label or header, a value every record shares is data; so are two records alike.
    const named = { ...picks, fields: ['title', 'status'] };
    expect(checkOutputs([named], { picks: books.map(({ text }) => ({ title: text, status: 'open' })) })).toEqual([]);
    expect(checkOutputs([{ ...picks, count: 2 }], { picks: books.slice(0, 2) })).toEqual([]);
  });
});

describe('a request for records answered with a heading', () => {
  it('tells requests for records from requests for one value', () => {
    for (const request of [
      'Open http://x.test/orders and read the orders',
      'list the results',
      'extract every story',
      'get all products from the table',
      'scrape the latest news',
      'Open http://x.test/ and extract the stories on every page',
      'read the order totals',
    ])
      expect(asksForRecords(request), request).toBe(true);
    for (const request of [
      'Open http://x.test/account and read the title',
      'get the status',
      'search for "all tables" and read the heading',
    ])
      expect(asksForRecords(request), request).toBe(false);
  });

  it('is refused, and the model is told to extract the records or say it could not', () => {
    const heading = proposal([{ action: 'extract_text', selector: 'h1', output: 'title', evidence: 'the heading' }]);
    expect(singleValueForRecords(heading, 'read the orders')).toMatch(/extract_table or extract_list.*goalNotFound/);
    expect(singleValueForRecords(heading, 'read the title')).toBeNull();
    const table = proposal([{ action: 'extract_table', selector: '#orders', output: 'orders', evidence: 'the table' }]);
    expect(singleValueForRecords(table, 'read the orders')).toBeNull();
  });
});

describe('what the pages showed, when the goal is not found', () => {
  it('names their tables, lists and forms', () => {
    const seen = [
      page('http://shop.test/login', {
        forms: [
          {
            selector: 'form',
            purpose: 'login',
            submit: [],
            inputs: [
              { selector: '#email', label: 'email', type: 'email', name: 'email', required: true, filled: false },
              { selector: '#password', label: 'password', type: 'password', name: 'password', required: true, filled: false },
            ],
          },
        ],
      }),
      page('http://shop.test/orders', { tables: [ordersTable(5)], lists: [storiesList(3)] }),
      page('http://shop.test/orders', { tables: [ordersTable(5)] }),
    ];
    expect(pagesShowed(seen)).toBe(
      'the pages showed: a login form (email, password), a table "Orders" (Id, Total, Status; 5 rows), a list of 3 items (title, points)',
    );
    expect(pagesShowed([])).toBe('the pages showed no table, list or form');
  });
});

describe('which generations are verified', () => {
  const run = (status: 'succeeded' | 'failed' | 'cancelled', mismatches?: { output: string; kind: string; message: string }[]) => ({
    status,
    runId: 'r',
    result: null,
    error: null,
    ...(mismatches ? { mismatches } : {}),
  });
  const job = (dryRun: ReturnType<typeof run> | null) => ({ dryRun }) as GenerationJob;

  it('only one whose last candidate ran green with the declared outputs', () => {
    expect(unverifiedBecause(job(run('succeeded', [])))).toBeNull();
    expect(unverifiedBecause(job(null))).toBe('its candidate was never dry-run');
    expect(unverifiedBecause(job(run('failed')))).toBe('its dry run failed');
    expect(unverifiedBecause(job(run('cancelled')))).toBe('its dry run was cancelled');
    expect(unverifiedBecause(job(run('succeeded')))).toMatch(/not checked/);
    expect(unverifiedBecause(job(run('succeeded', [{ output: 'orders', kind: 'empty_list', message: 'orders: an empty list' }])))).toMatch(
      /differs .*\(1 difference/,
    );
  });
});

describe('a proposal holds to what its request asks for, whichever model wrote it', () => {
  const sales = { selector: '#sales', caption: 'Sales by region', heading: null, headers: ['Region', 'Amount'], rowCount: 2 };
  const returns = { selector: '#returns', caption: 'Returns', heading: null, headers: ['Id', 'Region', 'Items'], rowCount: 3 };
  const twoTables = [page('http://shop.test/report', { tables: [sales, returns] })];
  const reading = (selector: string) =>
    proposal([{ action: 'extract_table', selector, output: 'records', evidence: 'a table' }], [{ name: 'records', description: 'rows' }]);

  it('reading another table than the one the request names is refused, naming the right one', () => {
    const [problem] = requestFitProblems(reading('#sales'), 'Open http://shop.test/report and extract the returns', twoTables);
    expect(problem).toContain('"#sales"');
    expect(problem).toContain('the table "#returns"');
    expect(requestFitProblems(reading('#returns'), 'Open http://shop.test/report and extract the returns', twoTables)).toEqual([]);
    // A request that names nothing specific leaves the choice to the model.
    expect(requestFitProblems(reading('#sales'), 'Open http://shop.test/report and extract the table', twoTables)).toEqual([]);
  });

  it('a request for each item’s own page is refused a proposal that visits none', () => {
    const list = page('http://shop.test/catalog', { lists: [{ ...storiesList(3), linkSelector: '#stories > li a' }] });
    const listOnly = proposal([
      {
        action: 'extract_list',
        selector: '#stories > li',
        fields: [{ name: 'title', selector: 'h3' }],
        output: 'products',
        evidence: 'the list',
      },
    ]);
    const request = 'Open the catalog and open each product to get its price and weight';
    expect(requestFitProblems(listOnly, request, [list])).toEqual([expect.stringContaining('no step visits those pages')]);
    const visiting = proposal([
      {
        action: 'extract_fields',
        selector: '#stories > li a',
        pagesSelector: '#stories > li a',
        fields: [{ name: 'price', selector: 'dd' }],
        output: 'products',
        evidence: 'each item links to its page',
      },
    ]);
    expect(requestFitProblems(visiting, request, [list])).toEqual([]);
  });
});

describe('a listing nothing names for the request', () => {
  it('is refused when the page is not named for it either, and taken when the prompt’s own steps led there', () => {
    const forecast = { selector: '#forecast', caption: 'Five-day forecast', heading: null, headers: ['Day', 'High', 'Low'], rowCount: 5 };
    const weather = [page('http://shop.test/weather', { title: 'Weather', tables: [forecast] })];
    const reading = proposal([{ action: 'extract_table', selector: '#forecast', output: 'prices', evidence: 'a table' }]);
    const request = 'Open http://shop.test/weather and extract the share prices';
    expect(requestFitProblems(reading, request, weather)).toEqual([expect.stringContaining('nothing on http://shop.test/weather names')]);
    // Signed in first, the one listing the steps led to stands for what was asked.
    const signedIn = proposal([
      { action: 'click', selector: '#go', waitForLoad: true, evidence: 'sign in' },
      { action: 'extract_table', selector: '#forecast', output: 'prices', evidence: 'a table' },
    ]);
    expect(requestFitProblems(signedIn, request, weather)).toEqual([]);
  });
});
