#!/usr/bin/env node
// The files and folders one payment passes through (docs/architecture.md, "A payment's path"):
// runs ONE integration test under V8 coverage (NODE_V8_COVERAGE, in band) and counts the product
// files with any function (not a module's top level) executed during the test itself, the stack's start (the `beforeAll`
// hooks) and teardown left out. Both counts are printed: every file the test ran, and those the
// stack's start had not run already (the older "minus a stack-start baseline" count).
//
//   node scripts/payment-path.mjs test/integration/mpesa-pay.test.ts 'prompts the phone, takes the callback'
//   node scripts/payment-path.mjs test/integration/chain-watcher-evm.test.ts 'shows a deposit as PROCESSING' --list
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const [testFile, testName, ...flags] = process.argv.slice(2);
if (!testFile || !testName) {
  console.error("usage: node scripts/payment-path.mjs <integration test file> '<test name>' [--list]");
  process.exit(2);
}
const product = ['api', 'web', 'services', 'activities', 'workflows', 'rails', 'runtime', 'worker', 'temporal-client', 'config', 'domain', 'db', 'bin'];

const dir = mkdtempSync(join(tmpdir(), 'payment-path-'));
const run = spawnSync(
  process.execPath,
  ['scripts/test.mjs', testFile, '-t', testName, '--runInBand', '--coverage=false', '--setupFilesAfterEnv', '<rootDir>/scripts/payment-path-setup.mjs'],
  { cwd: root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_V8_COVERAGE: dir } },
);
const stderr = run.stderr.toString();
if (run.status !== 0 || !/Tests:.*\b1 passed/.test(stderr)) {
  console.error(stderr.split('\n').slice(-40).join('\n'));
  console.error(`the test did not pass alone (exit ${run.status}); nothing measured`);
  process.exit(1);
}

/** The product files with any function (other than a module's top level) executed in one coverage snapshot. */
function executed(file) {
  const { result } = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  const files = new Set();
  for (const script of result) {
    const path = script.url.startsWith('file://') ? fileURLToPath(script.url) : script.url;
    const rel = relative(root, path);
    if (rel.startsWith('..') || !product.includes(rel.split('/')[0]) || !/\.(ts|mjs|js)$/.test(rel)) continue;
    // A module's own body (its top-level, offset 0) runs when it is imported: not a pass through it.
    if (script.functions.some((f) => f.ranges[0].count > 0 && !(f.functionName === '' && f.ranges[0].startOffset === 0))) files.add(rel);
  }
  return files;
}

// Snapshots are coverage-<pid>-<time>-<thread>.json. The jest process's main thread wrote three
// (before the test, after it, at exit); worker threads and child processes wrote their own.
const byPid = new Map();
for (const f of readdirSync(dir)) {
  const [, pid, time, thread] = f.replace(/\.json$/, '').split('-');
  if (thread !== '0') continue;
  byPid.set(pid, [...(byPid.get(pid) ?? []), { f, time: Number(time) }]);
}
const snapshots = [...byPid.values()].find((files) => files.length >= 3)?.sort((a, b) => a.time - b.time).map((s) => s.f);
if (!snapshots) throw new Error('no coverage snapshots of the test process (was the test run?)');
const [startFile, testFileSnap] = snapshots.slice(-3);
const start = executed(startFile);
const during = executed(testFileSnap);
if (process.env.PAYMENT_PATH_KEEP) console.log(`coverage kept in ${dir}`);
else rmSync(dir, { recursive: true, force: true });

function shape(files) {
  const list = [...files].sort();
  const folders = new Set(list.map((f) => f.split('/').slice(0, -1).join('/')));
  const top = new Set(list.map((f) => f.split('/')[0]));
  return { files: list.length, folders: folders.size, topLevel: top.size, list };
}
const all = shape(during);
const beyondStart = shape(new Set([...during].filter((f) => !start.has(f))));
console.log(`${testFile} › ${testName}`);
console.log(`  executed during the test:        ${all.files} files / ${all.folders} folders / ${all.topLevel} top-level`);
console.log(`  of those, not run by the start:  ${beyondStart.files} files / ${beyondStart.folders} folders / ${beyondStart.topLevel} top-level`);
if (flags.includes('--list')) for (const f of all.list) console.log(`    ${start.has(f) ? ' ' : '+'} ${f}`);
