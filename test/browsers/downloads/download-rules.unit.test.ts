import { describe, expect, it } from 'vitest';
import { ruleDownloadBehavior } from '../../../server/browsers/downloads/downloadBehavior.ts';
import { mimeTypeOf, sourceAddress } from '../../../server/browsers/downloads/downloadFiles.ts';
import { safeName } from '../../../server/browsers/host/downloads/browserDownloads.ts';
import { attachment } from '../../../server/http/downloadRoutes.ts';

/** The pure rules around a browser's downloads; test/browsers/downloads/downloads.test.ts drives them on the real stack. */

describe('the download behaviour a client may set', () => {
  it('on the browser’s host: allowed into the browser’s folder whatever folder was named, or denied', () => {
    const folder = '/data/browsers/h/abc/profile/downloads';
    for (const [asked, becomes] of [
      [
        { behavior: 'allow', downloadPath: '/root' },
        { behavior: 'allowAndName', downloadPath: folder },
      ],
      [
        { behavior: 'allowAndName', downloadPath: '/tmp', eventsEnabled: true },
        { behavior: 'allowAndName', downloadPath: folder, eventsEnabled: true },
      ],
      [{ behavior: 'default' }, { behavior: 'allowAndName', downloadPath: folder }],
      [{ behavior: 'deny', downloadPath: '/root' }, { behavior: 'deny' }],
      [{ behavior: 'ALLOW', downloadPath: '/root' }, { behavior: 'deny' }],
      [{ downloadPath: '/root' }, { behavior: 'deny' }],
    ] as const) {
      const params: Record<string, unknown> = { ...asked };
      ruleDownloadBehavior(params, folder);
      expect(params, JSON.stringify(asked)).toEqual(becomes);
    }
  });
});

describe('what is kept of a download', () => {
  it('names a file without folders or control characters', () => {
    expect(safeName('report.csv')).toBe('report.csv');
    expect(safeName('../../etc/passwd')).toBe('passwd');
    expect(safeName('C:\\Users\\x\\evil.exe')).toBe('evil.exe');
    expect(safeName('a\u0000b\u001fc\u007f.txt')).toBe('abc.txt');
    for (const empty of ['', '..', '.', '/', '  ']) expect(safeName(empty)).toBe('download');
    expect(safeName(`${'x'.repeat(300)}.csv`).length).toBe(200);
  });

  it('keeps a data: or blob: source as its scheme only', () => {
    expect(sourceAddress('https://shop.test/export?id=1')).toBe('https://shop.test/export?id=1');
    expect(sourceAddress('blob:https://shop.test/5f0c')).toBe('blob:');
    expect(sourceAddress('DATA:text/csv;base64,AAAA')).toBe('data:');
  });

  it('says the MIME type a file’s name does', () => {
    expect(mimeTypeOf('report.CSV')).toBe('text/csv');
    expect(mimeTypeOf('a.xlsx')).toBe('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet');
    expect(mimeTypeOf('archive')).toBe('application/octet-stream');
    expect(mimeTypeOf('x.unknown')).toBe('application/octet-stream');
  });

  it('serves a file as an attachment whose name cannot break the header', () => {
    expect(attachment('report.csv')).toBe(`attachment; filename="report.csv"; filename*=UTF-8''report.csv`);
    expect(attachment('a "b"\\c.csv')).toBe(`attachment; filename="a _b__c.csv"; filename*=UTF-8''a%20%22b%22%5Cc.csv`);
    expect(attachment('Bericht für März.csv')).toBe(
      `attachment; filename="Bericht f_r M_rz.csv"; filename*=UTF-8''Bericht%20f%C3%BCr%20M%C3%A4rz.csv`,
    );
    expect(attachment("it's (1).csv")).toBe(`attachment; filename="it's (1).csv"; filename*=UTF-8''it%27s%20%281%29.csv`);
  });
});
