import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { formPurpose } from '../../server/agents/page/collect/forms.ts';
import { inPage, modules } from '../../server/agents/page/collect/inPage.ts';
import { freeName, shapeOf, snakeName } from '../../server/agents/page/collect/listFields.ts';
import { bare, MORE_WORD, NEXT_WORD, pagerWord } from '../../server/agents/page/collect/pagerWords.ts';
import { cssId, quote, stableId, usesEngine, within } from '../../server/agents/page/collect/selectorText.ts';
import { headerKeys } from '../../server/agents/page/collect/tables.ts';
import { clean, fieldKey, isLabel, MAX_TEXT } from '../../server/agents/page/collect/text.ts';

/**
 * The page model's in-page parts that need no page: how texts are cut and named, how selectors are
 * written, which words page a listing. test/agents/page-model-reading.test.ts reads real pages in Chromium.
 */

describe('texts of the page model', () => {
  it('are one line without surrounding blanks, cut at MAX_TEXT', () => {
    expect(clean('  Order\n\t #42 \u00a0 shipped ')).toBe('Order #42 shipped');
    expect(clean(null)).toBe('');
    expect(clean(undefined)).toBe('');
    expect(clean('x'.repeat(MAX_TEXT + 20))).toHaveLength(MAX_TEXT);
  });

  it('a label is a short text that ends in a colon', () => {
    for (const text of ['Price:', 'Sold by:', 'Größe:']) expect(isLabel(text), text).toBe(true);
    for (const text of ['Price', '3 items:', `${'a'.repeat(40)}:`]) expect(isLabel(text), text).toBe(false);
  });

  it('record keys are lower snake case, never start with a digit and are at most 40 long', () => {
    expect(fieldKey('Release date')).toBe('release_date');
    expect(fieldKey(' -- Price (EUR) -- ')).toBe('price_eur');
    expect(fieldKey('2nd author')).toBe('_2nd_author');
    expect(fieldKey('ÄÖÜ')).toBe('');
    expect(fieldKey('word '.repeat(20))).toHaveLength(40);
  });

  it('list field names split camelCase and fall back to "text"', () => {
    const names = { productTitle: 'product_title', 'Sold by': 'sold_by', '9 lives': '_9_lives', '€€': 'text' };
    for (const [hint, name] of Object.entries(names)) expect(snakeName(hint), hint).toBe(name);
  });

  it('a taken field name gets the first free number, replacing its own', () => {
    expect(freeName('price', [])).toBe('price');
    expect(freeName('price', ['price'])).toBe('price_2');
    expect(freeName('price', ['price', 'price_2'])).toBe('price_3');
    expect(freeName('price_2', ['price_2'])).toBe('price_3');
  });

  it('an unlabelled value is named by its shape', () => {
    expect(shapeOf('TIME', 'Tuesday')).toBe('date');
    expect(shapeOf('SPAN', '2024-03-01')).toBe('date');
    expect(shapeOf('SPAN', '3 days ago')).toBe('date');
    expect(shapeOf('SPAN', '$3.50')).toBe('price');
    expect(shapeOf('SPAN', 'EUR 12')).toBe('price');
    expect(shapeOf('SPAN', '12,50 €')).toBe('price');
    expect(shapeOf('SPAN', 'by Frank Herbert')).toBe('author');
    expect(shapeOf('SPAN', '412 Pages')).toBe('pages');
    expect(shapeOf('SPAN', '-4.5%')).toBe('number');
    expect(shapeOf('SPAN', 'Dune')).toBeNull();
  });
});

describe('selector text', () => {
  it('an id is #id when it is an identifier, else an attribute match with its quotes escaped', () => {
    expect(cssId('main-nav')).toBe('#main-nav');
    expect(cssId('2col')).toBe('[id="2col"]');
    expect(cssId('a"b')).toBe('[id="a\\"b"]');
  });

  it('quoted values keep backslashes and quotes as text', () => {
    expect(quote('Say "hi"')).toBe('"Say \\"hi\\""');
    expect(quote('a\\b')).toBe('"a\\\\b"');
  });

  it('only hand-written ids are stable: no generated numbers, no leading digit, no colon', () => {
    expect(stableId('search-form')).toBe(true);
    expect(stableId('item-12')).toBe(true);
    expect(stableId('item-48213')).toBe(false);
    expect(stableId('3f2a')).toBe(false);
    expect(stableId(':r1:')).toBe(false);
  });

  it('a child selector chains with >> after Playwright engines and with a space after CSS', () => {
    expect(usesEngine('role=list[name="Results"s]')).toBe(true);
    expect(usesEngine('internal:text="x"')).toBe(true);
    expect(usesEngine('#results')).toBe(false);
    expect(within('role=list[name="Results"s]', 'a[href]')).toBe('role=list[name="Results"s] >> a[href]');
    expect(within('#results', 'a[href]')).toBe('#results a[href]');
  });
});

describe('words that page a listing', () => {
  it('bare text drops arrows and bars', () => {
    const words = { ' « Previous ': 'Previous', 'Next ›': 'Next', 'Older posts →': 'Older posts', '1 | 2': '1 2' };
    for (const [text, word] of Object.entries(words)) expect(bare(text), text).toBe(word);
  });

  it('pager links are numbers, onwards or back', () => {
    for (const word of ['3', 'Page 3', 'Next', 'Next page »', 'Older stories', 'More articles', '‹ Prev', 'Newer posts', 'Last'])
      expect(pagerWord(word), word).toBe(true);
    for (const word of ['Home', 'More', 'Read more', '3 items']) expect(pagerWord(word), word).toBe(false);
    expect(NEXT_WORD.test('More stories')).toBe(true);
  });

  it('"more" controls say so in a few words', () => {
    for (const word of ['More', 'Load more', 'Show more results', 'View 20 more', 'see more'])
      expect(MORE_WORD.test(word), word).toBe(true);
    for (const word of ['More about us', 'Read the rest']) expect(MORE_WORD.test(word), word).toBe(false);
  });
});

describe('what a form is for and what a table names its columns', () => {
  it('a password field logs in; a search field or search words search', () => {
    expect(formPurpose(['email', 'password'], 'Sign in')).toBe('login');
    expect(formPurpose(['search'], '')).toBe('search');
    expect(formPurpose(['text'], ' /find kw Keyword Find parts')).toBe('search');
    expect(formPurpose(['text'], 'q  Go')).toBe('search');
    expect(formPurpose(['text', 'text'], 'name Name mail E-mail Subscribe')).toBe('other');
  });

  it('columns are named by their header text, blanks by place, repeats numbered', () => {
    expect(headerKeys(['Name', '', 'Name', 'Name'], 4)).toEqual(['Name', 'column2', 'Name_2', 'Name_3']);
    expect(headerKeys(['Name'], 3)).toEqual(['Name', 'column2', 'column3']);
    expect(headerKeys([], 0)).toEqual([]);
  });
});

describe('the in-page code put together', () => {
  const folder = new URL('../../server/agents/page/collect/', import.meta.url);
  const files = readdirSync(folder).filter((file) => file.endsWith('.ts') && file !== 'inPage.ts');

  it('holds every module of its folder', () => {
    expect(Object.keys(modules).map((name) => `${name}.ts`)).toEqual(expect.arrayContaining(files));
    expect(Object.keys(modules)).toHaveLength(files.length);
  });

  it('each module exports all it declares at its top level: only exports are sent to the page', () => {
    for (const file of files) {
      const unexported = readFileSync(new URL(file, folder), 'utf8')
        .split('\n')
        .filter((line) => /^(?:async\s+)?(?:function|const|let|var|class)\b/.test(line));
      expect(unexported, file).toEqual([]);
    }
  });

  it('is one function that runs on its own: the parts are named in its scope', () => {
    const names = inPage((parts) => Object.keys(parts));
    const source = String(names);
    expect(source).not.toMatch(/__vi_|__vite_ssr|\bimport\b/);
    // Run here, where there is no page: the parts are all defined without one.
    expect(names(undefined).sort()).toEqual(
      Object.values(modules)
        .flatMap((module) => Object.keys(module))
        .sort(),
    );
  });
});
