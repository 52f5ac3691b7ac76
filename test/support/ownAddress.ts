import os from 'node:os';

/** The address of this machine on its network (192.0.2.2 here); loopback where there is none. */
export const ownAddress =
  Object.values(os.networkInterfaces())
    .flat()
    .find((entry) => entry && !entry.internal && entry.family === 'IPv4')?.address ?? '127.0.0.1';

const [a, b, c, d] = ownAddress.split('.').map(Number) as [number, number, number, number];

/** `ownAddress` as the low 32 bits of an IPv6 address (`c000:202`), for mapped, 6to4 and NAT64 forms. */
export const ownAddressHex = `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;

/**
 * `ownAddress` as a URL's host may spell it, each a way around a check that compares text:
 * IPv4-mapped IPv6 (hex, dotted, long and upper-case), one decimal number, a hex first part, and as is.
 */
export const ownAddressSpellings = [
  `[::ffff:${ownAddressHex}]`,
  `[::ffff:${ownAddress}]`,
  `[0:0:0:0:0:FFFF:${ownAddressHex.toUpperCase()}]`,
  String(((a << 24) >>> 0) + (b << 16) + (c << 8) + d),
  `0x${a.toString(16)}.${b}.${c}.${d}`,
  ownAddress,
];
