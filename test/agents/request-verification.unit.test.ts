import { describe, expect, it } from 'vitest';
import { kindOfWords, sameSense, stem } from '../../server/agents/model/lexicon.ts';
import { mentions } from '../../server/agents/model/requestReading.ts';
import { fieldsOfKind, valueIsOfKind } from '../../server/agents/model/valueKinds.ts';
import {
  kindMismatch,
  missingQualifiers,
  notFoundMessage,
  readRequestTerms,
  verifyAgainstRequest,
} from '../../server/agents/model/verification.ts';
import type { PageModel } from '../../server/agents/page/pageModel.ts';
import type { Proposal } from '../../server/agents/proposal.ts';

describe('the kind of each value', () => {
  it('e-mail: an address with a domain, a mailto: link too; never a phone number or a name', () => {
    for (const value of ['ada@example.com', 'j.doe+news@mail.co.uk', 'mailto:ops@branch.test'])
      expect(valueIsOfKind('email', value)).toBe(true);
    for (const value of ['+44 20 7946 0958', 'Ada Lovelace', 'example.com', '@handle', ''])
      expect(valueIsOfKind('email', value)).toBe(false);
  });

  it('phone: 7 to 15 digits with the usual signs; never a date, a price or a decimal', () => {
    for (const value of ['+44 20 7946 0958', '(555) 010-2030', '555-0101', '030 1234567', 'tel:+4930123456'])
      expect(valueIsOfKind('phone', value)).toBe(true);
    for (const value of ['2026-12-03', '12.50', '$1,250.00', 'ada@example.com', '12345', 'Main St 4'])
      expect(valueIsOfKind('phone', value)).toBe(false);
  });

  it('url: an address with a scheme, www., or a bare domain', () => {
    for (const value of ['https://shop.test/a?b=1', 'www.example.org', 'example.org/about']) expect(valueIsOfKind('url', value)).toBe(true);
    for (const value of ['Example Org', 'ada@example.com', '/relative only']) expect(valueIsOfKind('url', value)).toBe(false);
  });

  it('date: ISO, numeric, with a month name, a weekday, or relative', () => {
    for (const value of ['2026-12-03', '03/12/2026', '3 March 2026', 'Mar 3, 2026', 'December 2026', 'Friday', '2 days ago'])
      expect(valueIsOfKind('date', value)).toBe(true);
    for (const value of ['555-0101', 'Ada', '12.50', 'Room 4']) expect(valueIsOfKind('date', value)).toBe(false);
  });

  it('money: a currency sign or code, or two decimals', () => {
    for (const value of ['$12', '€ 3,50', '12.50 EUR', '1,250.00', 'USD 99', '£4.99/month', 'Free'])
      expect(valueIsOfKind('money', value)).toBe(true);
    for (const value of ['12', '4.5%', 'Ada', '2026-12-03']) expect(valueIsOfKind('money', value)).toBe(false);
  });

  it('number: digits with separators, a percent or a unit; a number value too', () => {
    for (const value of ['42', '1,204', '-3.5', '4.5%', '12 kg', '0.8734', 7]) expect(valueIsOfKind('number', value)).toBe(true);
    for (const value of ['Ada', '2026-12-03', 'ab12']) expect(valueIsOfKind('number', value)).toBe(false);
  });

  it('rating: stars, a score out of a scale, or a small number', () => {
    for (const value of ['★★★★☆', '4.5/5', '4 out of 5', '3 stars', '8.7']) expect(valueIsOfKind('rating', value)).toBe(true);
    for (const value of ['Great', '2026-12-03', '1234']) expect(valueIsOfKind('rating', value)).toBe(false);
  });

  it("name: a person's or a thing's name is words, never an address, a number, a date or a price", () => {
    for (const value of ['Ada Lovelace', 'Monstera deliciosa', "O'Neil & Sons", 'Branch 12 (Harbour)'])
      expect(valueIsOfKind('name', value)).toBe(true);
    for (const value of ['ada@example.com', '+44 20 7946 0958', '2026-12-03', '$12', '42', 'https://a.test'])
      expect(valueIsOfKind('name', value)).toBe(false);
  });

  it('a column of phone numbers holds no e-mail addresses; a column of addresses does', () => {
    const records = [
      { branch: 'Harbour', phone: '+44 20 7946 0001', email: 'harbour@bank.test' },
      { branch: 'Market', phone: '+44 20 7946 0002', email: 'market@bank.test' },
    ];
    expect(fieldsOfKind('email', records)).toEqual(['email']);
    expect(fieldsOfKind('phone', records)).toEqual(['phone']);
    expect(
      fieldsOfKind(
        'email',
        records.map(({ branch, phone }) => ({ branch, phone })),
      ),
    ).toEqual([]);
  });
});

describe('the lexicon', () => {
  it('words of one group name the same thing: name and title, price and cost', () => {
    expect(sameSense('name', 'title')).toBe(true);
    expect(sameSense('prices', 'cost')).toBe(true);
    expect(sameSense('name', 'price')).toBe(false);
    expect(mentions(['names'], 'div.plants h3 title number text')).toBe(true);
  });

  it('singular and plural share a stem, a word ending in -ze as any other: sizes, prizes, boxes, buzzes', () => {
    expect(['size', 'sizes'].map(stem)).toEqual(['size', 'size']);
    expect(['prize', 'prizes'].map(stem)).toEqual(['prize', 'prize']);
    expect(['box', 'boxes', 'buzz', 'buzzes', 'branch', 'branches'].map(stem)).toEqual(['box', 'box', 'buzz', 'buzz', 'branch', 'branch']);
  });

  it('a compound names its kind before its parts: a phone number is a phone, an e-mail address an e-mail', () => {
    expect(kindOfWords(['phone', 'number'])).toEqual({ kind: 'phone', words: ['phone', 'number'] });
    expect(kindOfWords(['manager', 'e-mail', 'address'])).toEqual({ kind: 'email', words: ['e-mail', 'address'] });
    expect(kindOfWords(['interest', 'rate'])?.kind).toBe('number');
    expect(kindOfWords(['team', 'members'])).toBeNull();
  });
});

describe('the terms of a request', () => {
  it('reads the qualifiers in the noun phrase and after it, as the user wrote them', () => {
    expect(readRequestTerms("get each branch manager's e-mail address from http://bank.test/branches")).toEqual({
      phrase: 'branch manager e-mail address',
      kind: { kind: 'email', words: ['e-mail', 'address'] },
      qualifiers: ['branch manager'],
      of: null,
    });
    expect(readRequestTerms('list the interest rate of every savings account')).toMatchObject({
      kind: { kind: 'number' },
      qualifiers: ['interest', 'savings account'],
      of: 'savings account',
    });
    expect(readRequestTerms('list the products in the kitchen category')?.qualifiers).toEqual(['kitchen']);
    // Words that narrow nothing a page shows are no qualifiers.
    expect(readRequestTerms('list the upcoming events')?.qualifiers).toEqual([]);
    expect(readRequestTerms('extract the matching books')?.qualifiers).toEqual([]);
    // Nor a verb run into the phrase, a keyword the request types, or things listed with their kind.
    expect(readRequestTerms('http://x.test/catalog open every product n get its details')?.qualifiers).toEqual([]);
    expect(readRequestTerms('http://x.test/lookup find dune books')?.qualifiers).toEqual([]);
    // A verb ends the phrase ("the sizes of the trail boot are in stock": no 'are' to find).
    expect(readRequestTerms('how many of each size of the trail boot are in stock?')?.qualifiers).not.toContainEqual(
      expect.stringContaining('are'),
    );
    expect(readRequestTerms('http://x.test/products all products + prices, load more')).toMatchObject({
      kind: { kind: 'money' },
      qualifiers: [],
    });
  });

  it('a qualifier is found by its words or their synonyms; the missing ones are named', () => {
    const terms = readRequestTerms('list the interest rate of every savings account');
    if (!terms) throw new Error('no terms');
    expect(missingQualifiers(terms, 'Exchange rates Currency Rate')).toEqual(['interest', 'savings account']);
    expect(missingQualifiers(terms, 'Savings accounts Account Interest rate')).toEqual([]);
    const staff = readRequestTerms('list the staff names');
    if (!staff) throw new Error('no terms');
    expect(missingQualifiers(staff, 'Our people: Employee, Title')).toEqual([]);
  });
});

const page = (overrides: Partial<PageModel>): PageModel => ({
  url: 'http://bank.test/',
  title: 'Bank',
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
const proposalFor = (selector: string, action: 'extract_table' | 'extract_list' = 'extract_table'): Proposal => ({
  goal: 'g',
  startUrl: 'http://bank.test/',
  steps: [
    { action: 'goto', url: 'http://bank.test/', evidence: 'e' },
    { action, selector, evidence: 'e', ...(action === 'extract_list' ? { fields: [{ name: 'name', selector: 'h3' }] } : {}) },
  ],
  parameters: [],
  outputs: [],
  risks: [],
});

describe('the qualifier and kind check of a proposal', () => {
  const rates = page({
    title: 'Exchange rates',
    headings: [{ selector: 'h1', text: 'Exchange rates', level: 1 }],
    tables: [{ selector: '#rates', caption: 'Exchange rates', heading: null, headers: ['Currency', 'Rate'], rowCount: 5 }],
  });
  it('a request for a qualifier the page lacks fails, naming the words', () => {
    const problem = verifyAgainstRequest(proposalFor('#rates'), 'get the interest rate of every savings account', [rates]);
    expect(problem).toMatchObject({ missing: ['interest', 'savings account'], kind: null });
    if (!problem) throw new Error('verified');
    expect(notFoundMessage(problem.terms, problem, 'exchange rates')).toBe(
      "found no 'interest rate' of a 'savings account' on the page: nothing near what it shows says 'interest' or 'savings account'; it shows exchange rates",
    );
  });

  it('the same words near the extraction (a caption, a heading, the chosen tab) verify it', () => {
    const savings = page({
      headings: [{ selector: 'h2', text: 'Savings accounts', level: 2 }],
      tables: [{ selector: '#acc', caption: null, heading: 'Savings accounts', headers: ['Account', 'Interest rate'], rowCount: 3 }],
    });
    expect(verifyAgainstRequest(proposalFor('#acc'), 'get the interest rate of every savings account', [savings])).toBeNull();
  });

  it('e-mail addresses asked of a table of phones fail on the kind', () => {
    const branches = page({
      headings: [{ selector: 'h1', text: 'Branches and managers', level: 1 }],
      tables: [{ selector: '#b', caption: null, heading: null, headers: ['Branch', 'Manager', 'Phone', 'Address'], rowCount: 4 }],
    });
    expect(verifyAgainstRequest(proposalFor('#b'), "list each branch manager's e-mail", [branches])).toMatchObject({
      missing: [],
      kind: 'email',
    });
    const withMail = {
      ...branches,
      tables: [{ ...(branches.tables[0] as PageModel['tables'][number]), headers: ['Branch', 'Manager', 'E-mail'] }],
    };
    expect(verifyAgainstRequest(proposalFor('#b'), "list each branch manager's e-mail", [withMail])).toBeNull();
  });

  it('a list whose samples are of the kind holds it; names asked of cards with titles fit', () => {
    const cards = page({
      lists: [
        {
          selector: '#plants',
          itemSelector: '#plants > div',
          count: 3,
          fields: [
            { name: 'title', selector: 'h3', sample: 'Monstera' },
            { name: 'number', selector: 'b', sample: '12' },
          ],
        },
      ],
    });
    expect(verifyAgainstRequest(proposalFor('#plants > div', 'extract_list'), 'list the names of the plants', [cards])).toMatchObject({
      missing: ['plants'],
    });
    const named = { ...cards, headings: [{ selector: 'h1', text: 'Our plants', level: 1 }] };
    expect(verifyAgainstRequest(proposalFor('#plants > div', 'extract_list'), 'list the names of the plants', [named])).toBeNull();
  });

  it("the dry run's result must hold the kind asked for", () => {
    const phones = {
      branches: [
        { branch: 'Harbour', phone: '+44 20 7946 0001' },
        { branch: 'Market', phone: '+44 20 7946 0002' },
      ],
    };
    expect(kindMismatch("each branch manager's e-mail address", phones)).toMatch(
      /'e-mail address'.*no field of the result holds e-mail addresses/,
    );
    expect(kindMismatch('the phone numbers of the branches', phones)).toBeNull();
    expect(kindMismatch('list the branches', phones)).toBeNull();
  });
});
