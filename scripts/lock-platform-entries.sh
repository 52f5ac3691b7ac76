#!/usr/bin/env bash
# Keeps package-lock.json acceptable to `npm ci` when the registry in use lacks some platform
# builds of an optional dependency (here: biome's and swc's darwin/win32/musl/android binaries).
#
# `npm install` on such a registry silently leaves those optional packages out of the lock, and
# `npm ci` then refuses the lock as "not in sync" ("Missing: @biomejs/cli-darwin-arm64@ from lock
# file"). This adds an entry (version, os, cpu, libc, optional) for every missing optional
# dependency whose name says its platform; `npm ci` skips them on other platforms without fetching,
# and on their own platform fetches them by version. Run it after `npm install <something>`.
set -euo pipefail
cd "$(dirname "$0")/.."

node - package-lock.json <<'EOF'
const { readFileSync, writeFileSync } = require('node:fs');
const file = process.argv[2];
const lock = JSON.parse(readFileSync(file, 'utf8'));
const oses = ['android', 'darwin', 'freebsd', 'linux', 'openbsd', 'sunos', 'win32', 'aix'];
const cpus = ['arm64', 'x64', 'arm', 'ia32', 'ppc64', 's390x', 'riscv64', 'loong64'];

/** `@biomejs/cli-linux-x64-musl` → {os: linux, cpu: x64, libc: musl}; null if the name names no platform. */
function platformOf(name) {
  const parts = name.split('/').pop().split('-');
  const i = parts.findIndex((part) => oses.includes(part));
  if (i < 0 || !cpus.includes(parts[i + 1])) return null;
  const os = parts[i];
  const entry = { os: [os], cpu: [parts[i + 1]] };
  if (os === 'linux') entry.libc = [parts.slice(i + 2).includes('musl') ? 'musl' : 'glibc'];
  return entry;
}

/** Where npm would look for `dep` from the package at `from` (nested first, then up to the root). */
function resolves(from, dep) {
  let dir = from;
  for (;;) {
    if (lock.packages[`${dir ? `${dir}/` : ''}node_modules/${dep}`]) return true;
    if (!dir) return false;
    const cut = dir.lastIndexOf('/node_modules/');
    dir = cut < 0 ? '' : dir.slice(0, cut);
  }
}

let added = 0;
for (const [at, pkg] of Object.entries(lock.packages)) {
  for (const [dep, version] of Object.entries(pkg.optionalDependencies ?? {})) {
    const platform = platformOf(dep);
    if (!platform || resolves(at, dep) || !/^\d+\.\d+\.\d+/.test(version)) continue;
    lock.packages[`node_modules/${dep}`] = { version, ...platform, ...(pkg.dev ? { dev: true } : {}), optional: true };
    console.log(`  + ${dep}@${version} (${platform.os[0]}/${platform.cpu[0]})`);
    added++;
  }
}
if (added === 0) {
  console.log('package-lock.json: nothing to add');
  process.exit(0);
}
// npm sorts lock keys this way; keeping its order keeps the diff to the added entries.
lock.packages = Object.fromEntries(Object.entries(lock.packages).sort(([a], [b]) => a.localeCompare(b, 'en')));
writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
console.log(`package-lock.json: added ${added} platform entries`);
EOF
