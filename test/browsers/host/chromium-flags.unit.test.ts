import { describe, expect, it } from 'vitest';
import { withFeatures } from '../../../server/browsers/launch/chromiumFlags.ts';

const base = [
  { disabled: ['A', 'B'], enabled: ['C'] },
  { disabled: ['D'], enabled: ['E'] },
];

describe('feature switches on a Chromium command line', () => {
  it('become one of each kind at the end, carrying every list', () => {
    expect(withFeatures(['--no-sandbox', '--window-size=800,600'], base)).toEqual([
      '--no-sandbox',
      '--window-size=800,600',
      '--disable-features=A,B,D',
      '--enable-features=C,E',
    ]);
  });

  it('take a session’s own switches in, a later mention of a feature winning', () => {
    expect(
      withFeatures(['--disable-features=X,C', '--mute-audio', '--enable-features=A,Y:mode/fast', '--disable-features=Y'], base),
    ).toEqual(['--mute-audio', '--disable-features=B,D,X,C,Y', '--enable-features=E,A']);
  });

  it('keep parameters and trial names of a feature, and leave out an empty list', () => {
    expect(withFeatures(['--enable-features=Z:size/2,W<Study'], [{ disabled: [], enabled: [] }])).toEqual([
      '--enable-features=Z:size/2,W<Study',
    ]);
    expect(withFeatures(['--headless'], [])).toEqual(['--headless']);
  });
});
