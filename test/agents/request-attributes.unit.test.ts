import { describe, expect, it } from 'vitest';
import { checkOutputs } from '../../server/agents/model/outputCheck.ts';
import {
  attributesNotInResult,
  coverAttributes,
  missingAttributes,
  narrowToRequest,
  type RequestAttribute,
  requestedAttributes,
} from '../../server/agents/model/requestAttributes.ts';
import { everyPageWords, notFoundMessage, verifyAgainstRequest } from '../../server/agents/model/verification.ts';
import type { PageModel } from '../../server/agents/page/pageModel.ts';
import type { Proposal } from '../../server/agents/proposal.ts';

const written = (request: string) => requestedAttributes(request).map((attribute) => attribute.written);
const site = 'http://shop.test:8080';

describe('the values a request names for each record', () => {
  it('a list after a dash, a colon, a question or in parentheses', () => {
    expect(written(`${site}/plans compare the plans - name, monthly cost, how much data`)).toEqual([
      'name',
      'monthly cost',
      'how much data',
    ]);
    expect(written(`${site}/lots for every lot: name, size and yearly rent (they're on each lot's own page)`)).toEqual([
      'name',
      'size',
      'yearly rent',
    ]);
    expect(written(`whats on at ${site}/events? name, when and place for each`)).toEqual(['name', 'when', 'place']);
    expect(written(`grab all the vacancies from ${site}/vacancies (title, employer, where)`)).toEqual(['title', 'employer', 'where']);
  });

  it('after "with" following the things listed, after a possessive, and before "of"/"for" each thing', () => {
    expect(written('list every room with its title, its price per night and how many guests it sleeps')).toEqual([
      'title',
      'price per night',
      'how many guests',
    ]);
    expect(written('list all the products with their prices')).toEqual(['prices']);
    expect(written("find the shops in the north and give me each one's name, town and phone number")).toEqual([
      'name',
      'town',
      'phone number',
    ]);
    expect(written('look for plumbers near me and list their names, phone numbers and how far away they are')).toEqual([
      'names',
      'phone numbers',
      'how far away',
    ]);
    expect(written('get the title and length of every episode, on all pages')).toEqual(['title', 'length']);
    expect(written(`${site}/contact email address for each department pls`)).toEqual(['email address']);
    expect(written('star rating of each hotel')).toEqual(['star rating']);
  });

  it('question words and kinds mean what a field is named or holds', () => {
    const [when, where, far, guests, phone] = [
      ...requestedAttributes('events? when, where'),
      ...requestedAttributes('list their how far away, how many guests and phone number'),
    ];
    expect(when).toMatchObject({ words: ['date', 'when'], kind: 'date' });
    expect(where).toMatchObject({ words: ['location', 'where'], kind: null });
    expect(far).toMatchObject({ words: ['distance'], kind: 'number' });
    expect(guests).toMatchObject({ words: ['guests'], kind: 'number' });
    // "phone number" is named by "phone", not by "number" (nor an e-mail address by "address").
    expect(phone).toMatchObject({ words: ['phone'], kind: 'phone' });
    expect(requestedAttributes('email address for each branch')[0]).toMatchObject({ words: ['email'], kind: 'email' });
  });

  it('asides, searches, counted things and details are not values of a record', () => {
    for (const request of [
      `${site}/picks every pick (theres a show more btn)`,
      `scrape ${site}/feed, all posts (it loads more as u scroll)`,
      `${site}/news - all stories, keep going to the oldest`,
      `${site}/recipes search with nothing typed, all recipes`,
      `Open ${site}/recipes, run the search with the search box left empty, and list all the recipes it finds`,
      `Open ${site}/catalog and read the details of each product`,
      `${site}/companies open each company and grab its details`,
      `Open ${site}/login, log in with email "ada@example.com" and password "x-1", and extract the orders from every page`,
      `${site}/parts search valve, table of results pls`,
      `who's on the team? ${site}/team`,
      `how many of each size of the trail boot are in stock? ${site}/boot`,
    ])
      expect(written(request), request).toEqual([]);
  });
});

const attributesOf = (request: string) => requestedAttributes(request);
const heldBy = (held: Map<RequestAttribute, string>) =>
  Object.fromEntries([...held].map(([attribute, field]) => [attribute.written, field]));

describe('which field holds each value', () => {
  it('by its name, a synonym of the lexicon among them (cost for fee, when for date, place for venue)', () => {
    const { held, missing } = coverAttributes(attributesOf('plans - name, monthly cost, when, place'), [
      { name: 'title', values: ['Starter'] },
      { name: 'monthly_fee', values: ['£8.00'] },
      { name: 'startDate', values: ['2027-01-08'] },
      { name: 'venue', values: ['Town Hall'] },
    ]);
    expect(heldBy(held)).toEqual({ name: 'title', 'monthly cost': 'monthly_fee', when: 'startDate', place: 'venue' });
    expect(missing).toEqual([]);
  });

  it('by the kind of its values when no name says it; a name by the text of the item link', () => {
    const { held } = coverAttributes(attributesOf("each one's name, phone number"), [
      { name: 'link', values: ['Ribble Garden Centre'] },
      { name: 'text', values: ['01772 960 118'] },
    ]);
    expect(heldBy(held)).toEqual({ name: 'link', 'phone number': 'text' });
  });

  it('names no field is named for: the first field (a table’s first column), unless its values are of another kind', () => {
    const { held, missing } = coverAttributes(attributesOf('list their names, phone numbers and how far away they are'), [
      { name: 'Business', values: [] },
      { name: 'Phone', values: [] },
      { name: 'Distance', values: [] },
    ]);
    expect(heldBy(held)).toEqual({ names: 'Business', 'phone numbers': 'Phone', 'how far away': 'Distance' });
    expect(missing).toEqual([]);
    // A first field of dates or prices names nothing.
    expect(
      coverAttributes(attributesOf("each one's name, price"), [
        { name: 'Opens', values: ['2027-01-08'] },
        { name: 'Price', values: ['£4.00'] },
      ]).missing.map((attribute) => attribute.written),
    ).toEqual(['name']);
  });

  it('one value left that names no kind takes the one field the page did not name, decoration aside', () => {
    const { held } = coverAttributes(attributesOf('concerts with their title and venue'), [
      { name: 'title', values: ['Low Tide Brass'] },
      { name: 'text', values: ['▸'] },
      { name: 'text_2', values: ['Harbour Rooms'] },
    ]);
    expect(heldBy(held)).toEqual({ title: 'title', venue: 'text_2' });
    // Two values left for two unnamed fields: which is which is not known, so neither is held.
    expect(
      coverAttributes(attributesOf('ads (title, employer, where)'), [
        { name: 'title', values: ['Barista'] },
        { name: 'text', values: ['Two Rivers Coffee'] },
        { name: 'text_2', values: ['Ilkley'] },
      ]).missing.map((attribute) => attribute.written),
    ).toEqual(['employer', 'where']);
  });

  it('a kind is held by its name or its values only: a star rating is not the one text left', () => {
    const { missing } = coverAttributes(attributesOf('star rating of each hotel'), [
      { name: 'title', values: ['The Quayside'] },
      { name: 'text', values: ['0.3 miles from the centre · 42 rooms'] },
    ]);
    expect(missing.map((attribute) => attribute.written)).toEqual(['star rating']);
    const phones = coverAttributes(attributesOf('email address for each department'), [
      { name: 'Department', values: ['Appointments'] },
      { name: 'Telephone', values: ['0161 496 0100'] },
      { name: 'Address', values: ['14 Moor Lane'] },
    ]);
    expect(phones.missing.map((attribute) => attribute.written)).toEqual(['email address']);
  });
});

const page = (overrides: Partial<PageModel>): PageModel => ({
  url: 'http://shop.test/',
  title: 'Shop',
  headings: [],
  forms: [],
  buttons: [],
  links: [],
  navigation: [],
  pagination: null,
  tables: [],
  lists: [],
  details: [],
  ...overrides,
});
const plans = page({
  title: 'Mobile plans',
  headings: [{ selector: 'h1', text: 'Mobile plans', level: 1 }],
  lists: [
    {
      selector: '#plans',
      itemSelector: '#plans > section',
      count: 5,
      heading: 'Mobile plans',
      fields: [
        { name: 'title', selector: 'h3', sample: 'Starter 5' },
        { name: 'monthly_fee', selector: 'dd.fee', sample: '£8.00' },
        { name: 'data', selector: 'dd.data', sample: '5 GB' },
        { name: 'contract', selector: 'dd.term', sample: '12 months' },
        { name: 'link', selector: 'a.cta', sample: 'Choose this plan' },
      ],
    },
  ],
});
const listProposal = (fields: string[], paging?: Proposal['steps'][number]['paging']): Proposal => ({
  goal: 'g',
  startUrl: 'http://shop.test/',
  steps: [
    { action: 'goto', url: 'http://shop.test/', evidence: 'e' },
    {
      action: 'extract_list',
      selector: '#plans > section',
      output: 'plans',
      evidence: 'e',
      fields: (plans.lists[0]?.fields ?? [])
        .filter((field) => fields.includes(field.name))
        .map(({ name, selector }) => ({ name, selector })),
      ...(paging ? { paging } : {}),
    },
  ],
  parameters: [],
  outputs: [{ name: 'plans', description: 'd', kind: 'records', fields }],
  risks: [],
});
const all = ['title', 'monthly_fee', 'data', 'contract', 'link'];

describe('a proposal held to the values the request names', () => {
  it('holds them all: verified, and narrowed to them (the steps and the declared outputs)', () => {
    const request = 'mobile plans - name, monthly cost, how much data';
    expect(missingAttributes(listProposal(all), request, [plans])).toEqual([]);
    expect(verifyAgainstRequest(listProposal(all), request, [plans])).toBeNull();
    const narrowed = narrowToRequest(listProposal(all), request, [plans]);
    expect(narrowed.steps[1]?.fields?.map((field) => field.name)).toEqual(['title', 'monthly_fee', 'data']);
    expect(narrowed.outputs[0]?.fields).toEqual(['title', 'monthly_fee', 'data']);
  });

  it('misses one: refused, naming the words the user wrote, and left as it is', () => {
    const request = 'mobile plans - name, monthly cost, how much data, roaming';
    const problem = verifyAgainstRequest(listProposal(all), request, [plans]);
    expect(problem).toMatchObject({ attributes: ['roaming'], missing: [], kind: null, pages: null });
    if (!problem) throw new Error('verified');
    expect(notFoundMessage(problem.terms, problem, 'a list of plans')).toBe(
      "could not extract all that was asked: no field of what it extracts holds 'roaming'; it shows a list of plans",
    );
    expect(narrowToRequest(listProposal(all), request, [plans])).toEqual(listProposal(all));
  });

  it('"every page" asked and a listing read on its first page only: refused, naming the words', () => {
    expect(everyPageWords('get every plan, on all pages')).toBe('all pages');
    expect(everyPageWords('extract all the tickets, following the pages to the last one')).toBe('to the last one');
    expect(everyPageWords('list all the plans')).toBeNull();
    const problem = verifyAgainstRequest(listProposal(all), 'list the plans from every page', [plans]);
    expect(problem).toMatchObject({ pages: 'every page', attributes: [] });
    if (!problem) throw new Error('verified');
    expect(notFoundMessage(problem.terms, problem, 'a list')).toMatch(
      /the request asks for 'every page', but nothing goes on past the first page/,
    );
    expect(
      verifyAgainstRequest(listProposal(all, { kind: 'more', selector: 'button' }), 'list the plans from every page', [plans]),
    ).toBeNull();
  });
});

describe("the dry run's result held to the values the request names", () => {
  const result = {
    plans: [
      { title: 'Starter 5', monthly_fee: '£8.00', data: '5 GB' },
      { title: 'Family 100', monthly_fee: '£20.00', data: '100 GB' },
    ],
  };
  it('every value held by a field of some output, by its name or its values', () => {
    expect(attributesNotInResult('plans - name, monthly cost, how much data', result)).toEqual([]);
    expect(attributesNotInResult('plans - name, price, phone number', result)).toEqual(['phone number']);
    expect(attributesNotInResult('list the plans', result)).toEqual([]);
  });

  it('the first field of a stored result (which keeps no key order) is the first the analysis declared', () => {
    // As a stored result gives the keys back: shortest first.
    const rows = { vets: [{ Phone: '01904 960 210', Practice: 'Ouse Equine', Distance: '2.1 miles' }] };
    const request = 'list their names, phone numbers and how far away they are';
    expect(attributesNotInResult(request, rows, { vets: ['Practice', 'Phone', 'Distance'] })).toEqual([]);
    expect(attributesNotInResult(request, rows)).toEqual(['names']);
  });

  it('a value missing from the result is a mismatch of its own, in the words of the request', () => {
    const declarations = [{ name: 'plans', description: 'd', kind: 'records' as const, fields: ['title'] }];
    expect(checkOutputs(declarations, result, 'plans - name, roaming')).toEqual([
      {
        output: 'plans',
        kind: 'missing_attribute',
        message: "the request asks for 'roaming' of each record, but no field of the result holds it",
      },
    ]);
    expect(checkOutputs(declarations, result, 'plans - name, monthly cost')).toEqual([]);
  });
});

describe('a hyphenated qualifier', () => {
  it('is found in the words of a page, which are read apart at hyphens', async () => {
    const { missingQualifiers, readRequestTerms } = await import('../../server/agents/model/verification.ts');
    const terms = readRequestTerms('copy the fixed-rate bonds table');
    if (!terms) throw new Error('no terms');
    expect(terms.qualifiers).toEqual(['fixed-rate']);
    expect(missingQualifiers(terms, 'Fixed-rate bonds Bond Term Rate (AER)')).toEqual([]);
    expect(missingQualifiers(terms, 'Easy access savings Account Rate (AER)')).toEqual(['fixed-rate']);
  });
});

describe("a record's own name", () => {
  it('is held by a field named for the thing listed ("every office - name, phone")', () => {
    const fields = [
      { name: 'office', values: ['Harbour'] },
      { name: 'phone', values: ['+44 20 7946 0101'] },
      { name: 'opens', values: ['09:00'] },
    ];
    expect(coverAttributes(requestedAttributes('every office - name, phone'), fields, ['office']).missing).toEqual([]);
    // Without the thing, the first field holds the name (its values are no date, price, phone…).
    expect(heldBy(coverAttributes(requestedAttributes('every office - name, phone'), fields).held)).toEqual({
      name: 'office',
      phone: 'phone',
    });
    const [, ...notFirst] = fields;
    expect(
      coverAttributes(requestedAttributes('every office - name, phone'), [...notFirst, fields[0] as (typeof fields)[0]]).missing.map(
        (a) => a.written,
      ),
    ).toEqual(['name']);
  });
});

describe('narrowing keeps what names each record', () => {
  const offices = page({
    lists: [
      {
        selector: '#offices',
        itemSelector: '#offices > dl',
        count: 4,
        fields: [
          { name: 'office', selector: 'dd.o', sample: 'Harbour' },
          { name: 'phone', selector: 'dd.p', sample: '+44 20 7946 0101' },
          { name: 'opens', selector: 'dd.h', sample: '09:00' },
        ],
      },
    ],
  });
  const proposal: Proposal = {
    goal: 'g',
    startUrl: 'http://shop.test/',
    steps: [
      {
        action: 'extract_list',
        selector: '#offices > dl',
        output: 'offices',
        evidence: 'e',
        fields: [
          { name: 'office', selector: 'dd.o' },
          { name: 'phone', selector: 'dd.p' },
          { name: 'opens', selector: 'dd.h' },
        ],
      },
    ],
    parameters: [],
    outputs: [],
    risks: [],
  };
  it('the first field when no field is a name: "the phone numbers of the offices" keeps office and phone', () => {
    const narrowed = narrowToRequest(proposal, 'list the phone numbers of the offices', [offices]);
    expect(narrowed.steps[0]?.fields?.map((field) => field.name)).toEqual(['office', 'phone']);
  });
});
