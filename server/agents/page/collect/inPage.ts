/**
 * The in-page code as one self-contained function. Its parts are small modules of this folder,
 * typed and tested on their own; the host sends a function's source to the page (CDP
 * `Runtime.callFunctionOn`), so they are put together here into one function whose scope holds
 * every part under its own name, as the modules import them.
 *
 * A part's source is its function's own text (`Function.prototype.toString`), which is what
 * Node's type stripping left of the file: nothing of the module comes with it. So every part
 * keeps to these rules:
 * - each module of this folder exports all it declares, and is listed in `modules` below
 *   (test/agents/page-model-reading.unit.test.ts);
 * - a module imports values only from this folder (dependency-cruiser's
 *   `in-page-code-imports-only-in-page-code`);
 * - no two modules export the same name, and what they export is a function, a regular
 *   expression, a number or a string (`partsSource` throws otherwise).
 * Vitest loads this folder natively (vitest.config.ts), since its module transform would rewrite
 * the imported names inside the functions' text.
 */
import * as accessibleName from './accessibleName.ts';
import * as buttons from './buttons.ts';
import * as collectPageModel from './collectPageModel.ts';
import * as controls from './controls.ts';
import * as details from './details.ts';
import * as forms from './forms.ts';
import * as headings from './headings.ts';
import * as links from './links.ts';
import * as listFields from './listFields.ts';
import * as lists from './lists.ts';
import * as navigation from './navigation.ts';
import * as pagerWords from './pagerWords.ts';
import * as pagination from './pagination.ts';
import * as selector from './selector.ts';
import * as selectorText from './selectorText.ts';
import * as tables from './tables.ts';
import * as text from './text.ts';
import * as visible from './visible.ts';

/** Every module of the in-page code, by its file name. */
export const modules = {
  accessibleName,
  buttons,
  collectPageModel,
  controls,
  details,
  forms,
  headings,
  links,
  listFields,
  lists,
  navigation,
  pagerWords,
  pagination,
  selector,
  selectorText,
  tables,
  text,
  visible,
};

/** Every part of the in-page code, by name: what a function run by `inPage` is handed. */
export type Parts = typeof accessibleName &
  typeof buttons &
  typeof collectPageModel &
  typeof controls &
  typeof details &
  typeof forms &
  typeof headings &
  typeof links &
  typeof listFields &
  typeof lists &
  typeof navigation &
  typeof pagerWords &
  typeof pagination &
  typeof selector &
  typeof selectorText &
  typeof tables &
  typeof text &
  typeof visible;

/** A part as source text. */
function sourceOf(name: string, value: unknown) {
  if (typeof value === 'function' || value instanceof RegExp) return String(value);
  if (typeof value === 'number' || typeof value === 'string') return JSON.stringify(value);
  throw new Error(`in-page part ${name} is neither a function, a regular expression, a number nor a string`);
}

/** `const name = …;` for every part, in the order of `modules`. */
function partsSource() {
  const names = new Set<string>();
  const lines: string[] = [];
  for (const [file, module] of Object.entries(modules)) {
    for (const [name, value] of Object.entries(module)) {
      if (names.has(name)) throw new Error(`in-page part ${name} of ${file}.ts is exported by another module too`);
      names.add(name);
      lines.push(`const ${name} = ${sourceOf(name, value)};`);
    }
  }
  return { source: lines.join('\n'), names: [...names] };
}

/**
 * `main` as a function that runs in a page on its own: `main(parts, arg)` with every part of the
 * in-page code in its scope. `main` itself is sent as its text too, so it uses only its arguments.
 */
export function inPage<A, R>(main: (parts: Parts, arg: A) => R): (arg: A) => R {
  const { source, names } = partsSource();
  return new Function('arg', `${source}\nreturn (${String(main)})({ ${names.join(', ')} }, arg);`) as (arg: A) => R;
}
