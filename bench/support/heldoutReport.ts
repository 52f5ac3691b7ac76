/**
 * The held-out sections of docs/benchmarks/analysis.md, one per held-out set: "Held-out set (issue
 * 38)" written by `BENCH_SET=heldout npm run bench:analysis`, "Held-out set 2" by
 * `BENCH_SET=heldout2 …`, "Held-out set 3" by `BENCH_SET=heldout3 …`. A run of one set keeps the
 * other sections as they are. A set's section lies
 * between `<!-- <set> -->` and `<!-- /<set> -->`; its per-model parts between `<!-- <set>-model … -->`
 * markers, which the tuned set's `<!-- model … -->` pattern and the other sets' do not match.
 */
import { SECRET, type Shape } from './shapes.ts';

/** The held-out sets, by their `BENCH_SET` name. */
export type HeldoutSet = 'heldout' | 'heldout2' | 'heldout3';
export const heldoutSets: HeldoutSet[] = ['heldout', 'heldout2', 'heldout3'];

/** The sets written blind with two prompts per shape, each with a page checker of its own. */
const laterSets: Record<Exclude<HeldoutSet, 'heldout'>, { title: string; file: string; checker: string; earlier: string }> = {
  heldout2: {
    title: 'Held-out set 2',
    file: 'bench/support/heldoutShapes2.ts',
    checker: 'bench/support/checkHeldout2Pages.ts',
    earlier: "the tuned set's or the first held-out set's",
  },
  heldout3: {
    title: 'Held-out set 3',
    file: 'bench/support/heldoutShapes3.ts',
    checker: 'bench/support/checkHeldout3Pages.ts',
    earlier: "the tuned set's or the first two held-out sets'",
  },
};

export type Summary = {
  correct: number;
  loud: number;
  silentWrong: number;
  prompts: number;
  redesign: string;
  minutes: string;
  measured: string;
};
export type ModelSection = { summary: Summary; text: string };

const blockOf = (set: HeldoutSet) => new RegExp(`<!-- ${set} -->\\n[\\s\\S]*?<!-- \\/${set} -->\\n?`);

const cell = (text: string) => text.replaceAll('|', '/').replaceAll('\n', ' ').replaceAll('<', '&lt;');

/** A held-out set's block of a file's text, or ''. */
export function heldoutBlockOf(fileText: string, set: HeldoutSet = 'heldout') {
  return blockOf(set).exec(fileText)?.[0] ?? '';
}

/** The per-model parts of a held-out set's block, as a former run wrote them. */
export function heldoutModelsOf(fileText: string, set: HeldoutSet = 'heldout') {
  const models = new Map<string, ModelSection>();
  for (const match of heldoutBlockOf(fileText, set).matchAll(
    new RegExp(`<!-- ${set}-model (\\S+) (\\{.*?\\}) -->\\n([\\s\\S]*?)\\n<!-- \\/${set}-model \\1 -->`, 'g'),
  )) {
    models.set(match[1] as string, { summary: JSON.parse(match[2] as string), text: match[3] as string });
  }
  return models;
}

/** The file's text with a held-out set's block replaced by `block`, or with `block` added at the end. */
export function withHeldoutBlock(fileText: string, block: string, set: HeldoutSet = 'heldout') {
  const pattern = blockOf(set);
  if (pattern.test(fileText)) return fileText.replace(pattern, () => block);
  return `${fileText.replace(/\n*$/, '')}\n\n${block}`;
}

/**
 * The held-out block: what the set is, the summary per model (none before it is scored), the prompts,
 * and each model's part. `url` is the site's address, shown as `{site}`.
 */
export function heldoutBlock(options: {
  shapes: Shape[];
  url: string;
  models: [string, ModelSection][];
  machine: string;
  set?: HeldoutSet;
}) {
  if (options.set && options.set !== 'heldout') return laterSetBlock({ ...options, set: options.set });
  const { shapes, url, models, machine } = options;
  const missing = shapes.filter((shape) => shape.goalMissing).length;
  const count = (phrasing: 'careful' | 'hurried') => shapes.filter((shape) => shape.prompts[phrasing]).length;
  return [
    '<!-- heldout -->',
    '## Held-out set (issue 38)',
    '',
    `Command: \`BENCH_SET=heldout npm run bench:analysis\` (bench/analysis.ts). ${shapes.length} page shapes (bench/support/heldoutShapes.ts), written for issue 38 by a team member who had not read the proposer (\`server/agents/\`), with **one prompt per shape** as a user would type it (${count('careful')} written with care, ${count('hurried')} hurried): ${shapes.length} prompts per model. ${shapes.length - missing} pages hold what is asked; ${missing} do not, while something that looks like it is there (a loud end is the right answer on those).`,
    '',
    'Each prompt goes through the chain the tuned set goes through and is scored the same way (correct / loud / silent wrong, never `force`, then the correct versions again after a cosmetic redesign). **Do not tune to this set**: it is scored once, at the end of a change; the next change to the proposer is scored on a new held-out set. A run with `BENCH_SHAPES` only prints; a run of every held-out shape rewrites the parts of the models it ran here and keeps the others; the tuned sections above are left as they are.',
    '',
    '**This set is spent: it is now a development set.** Scored once on 2026-12-07 at commit 98d4ccf (`builtin` 5/20 correct, 8 silent wrong; `local` 5/20 correct, 6 silent wrong), it was then used to develop the change that followed (the values a request names for each record, "every page", hyphenated qualifiers): its figures below measure that work, not how the proposer does on pages nobody tuned for. A new held-out set, written by someone else, judges the change.',
    '',
    ...(models.length ? [machine, ''] : []),
    '### Summary',
    '',
    ...(models.length
      ? [
          '| model | correct | loud | silent wrong | correct after the redesign | run time | measured |',
          '| --- | --- | --- | --- | --- | --- | --- |',
          ...models.map(
            ([model, { summary }]) =>
              `| \`${model}\` | ${summary.correct}/${summary.prompts} | ${summary.loud}/${summary.prompts} | ${summary.silentWrong}/${summary.prompts} | ${summary.redesign} | ${summary.minutes} | ${summary.measured} |`,
          ),
        ]
      : ['Not scored yet: it is scored once, at the end of the change of issue 38.']),
    '',
    '### The prompts',
    '',
    '`{site}` is the local site’s address.',
    '',
    '| # | shape | phrasing | prompt | the page holds what is asked |',
    '| --- | --- | --- | --- | --- |',
    ...shapes.map((shape, index) => {
      const [phrasing, prompt] = Object.entries(shape.prompts)[0] ?? ['-', () => ''];
      return `| ${index + 1} | ${cell(shape.name)} | ${phrasing} | ${cell(prompt(url).replaceAll(url, '{site}'))} | ${shape.goalMissing ? 'no' : `yes (${shape.expected.length} records)`} |`;
    }),
    '',
    ...modelSections('heldout', models),
    '<!-- /heldout -->',
    '',
  ].join('\n');
}

/** Each model's part of a set's block, between the markers a later run finds it by (`<!-- heldout-model … -->`). */
const modelSections = (set: string, models: [string, ModelSection][]) =>
  models.flatMap(([model, { summary, text }]) => [
    `<!-- ${set}-model ${model} ${JSON.stringify(summary)} -->`,
    text,
    `<!-- /${set}-model ${model} -->`,
    '',
  ]);

const summaryTable = (models: [string, ModelSection][], notYet: string) =>
  models.length
    ? [
        '| model | correct | loud | silent wrong | correct after the redesign | run time | measured |',
        '| --- | --- | --- | --- | --- | --- | --- |',
        ...models.map(
          ([model, { summary }]) =>
            `| \`${model}\` | ${summary.correct}/${summary.prompts} | ${summary.loud}/${summary.prompts} | ${summary.silentWrong}/${summary.prompts} | ${summary.redesign} | ${summary.minutes} | ${summary.measured} |`,
        ),
      ]
    : [notYet];

/**
 * The block of a later set (`laterSets`): as the first set's, with both prompts of each shape in its
 * table and the password of the sign-in prompts shown as `<secret>`.
 */
function laterSetBlock(options: {
  shapes: Shape[];
  url: string;
  models: [string, ModelSection][];
  machine: string;
  set: Exclude<HeldoutSet, 'heldout'>;
}) {
  const { shapes, url, models, machine, set } = options;
  const { title, file, checker, earlier } = laterSets[set];
  const missing = shapes.filter((shape) => shape.goalMissing).length;
  const prompts = shapes.reduce((sum, shape) => sum + Object.keys(shape.prompts).length, 0);
  const shown = (prompt: string | undefined) => (prompt ? cell(prompt.replaceAll(url, '{site}').replaceAll(SECRET, '<secret>')) : '-');
  return [
    `<!-- ${set} -->`,
    `## ${title}`,
    '',
    `Command: \`BENCH_SET=${set} npm run bench:analysis\` (bench/analysis.ts). ${shapes.length} page shapes (${file}), written blind to the proposer: its author never opened \`server/agents/\`, the discussion of outcomes in this file, or the tuned pages beyond their format, and used none of ${earlier} page designs. **Two prompts per shape**, one written with care and one hurried: ${prompts} prompts per model. ${shapes.length - missing} pages hold what is asked; ${missing} do not, while something that looks like it is there (a loud end is the right answer on those). \`node ${checker}\` checks the pages and the expected records in Chromium, without any analysis.`,
    '',
    'Each prompt goes through the chain the tuned set goes through and is scored the same way (correct / loud / silent wrong, never `force`, then the correct versions again after a cosmetic redesign). **Do not tune to this set**: it is scored once, at the end of a change; once scored it is as good as tuned. A run with `BENCH_SHAPES` only prints; a run of every shape rewrites the parts of the models it ran here and keeps the others; the other sections are left as they are.',
    '',
    ...(models.length ? [machine, ''] : []),
    '### Summary',
    '',
    ...summaryTable(models, 'Not scored yet: it is scored once, by the integrator, at the end of a change to the proposer.'),
    '',
    '### The prompts',
    '',
    shapes.some((shape) => shape.secret)
      ? '`{site}` is the local site’s address, `<secret>` the password.'
      : '`{site}` is the local site’s address.',
    '',
    '| # | shape | careful | hurried | the page holds what is asked |',
    '| --- | --- | --- | --- | --- |',
    ...shapes.map(
      (shape, index) =>
        `| ${index + 1} | ${cell(shape.name)} | ${shown(shape.prompts.careful?.(url))} | ${shown(shape.prompts.hurried?.(url))} | ${shape.goalMissing ? 'no' : `yes (${shape.expected.length} records)`} |`,
    ),
    '',
    ...modelSections(set, models),
    `<!-- /${set} -->`,
    '',
  ].join('\n');
}
