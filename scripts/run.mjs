// `npm start`, `npm run dev` and `npm run worker`: run a TypeScript entry point of src/ as JavaScript.
//
//   node scripts/run.mjs main            transpile src/ into .run/start/ when it changed, then run main.js here
//   node scripts/run.mjs --watch main    transpile into .run/watch/ on every change and restart the child running it
//
// esbuild strips the types of all of src/ in a few hundred milliseconds (`npm run typecheck` checks
// them), and plain JavaScript then loads without a module loader hook: a start is about a second sooner
// than through tsx. The two modes have folders of their own, so a watcher never rewrites what a running
// server loads. The watcher is esbuild's own service, a child of this process, which reaps it and every
// server it starts.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import process from 'node:process';
import { setInterval } from 'node:timers';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

const args = process.argv.slice(2);
const watch = args[0] === '--watch';
const entry = watch ? args[1] : args[0];
const out = join(root, '.run', watch ? 'watch' : 'start');
const stampFile = join(out, '.stamp');
if (!entry || !existsSync(join(src, `${entry}.ts`))) {
  process.stderr.write('Usage: node scripts/run.mjs [--watch] <entry of src/, e.g. main>\n');
  process.exit(2);
}

function sourceFiles() {
  return readdirSync(src, { recursive: true })
    .map((name) => join(src, String(name)))
    .filter((path) => /\.(ts|json)$/.test(path) && !path.endsWith('.d.ts'))
    .sort();
}

/** The list of files and their latest change: a new, removed or edited file changes it. */
function stampOf(files) {
  let latest = 0;
  for (const file of files) latest = Math.max(latest, statSync(file).mtimeMs);
  return `${latest}\n${files.map((file) => relative(src, file)).join('\n')}`;
}

const options = (files) => ({
  entryPoints: files.filter((file) => file.endsWith('.ts')),
  outdir: out,
  outbase: src,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  sourcemap: 'linked',
  logLevel: 'warning',
});

/** JSON data is imported with `with { type: 'json' }`, which wants the file itself beside the module. */
function copyJson(files) {
  for (const file of files.filter((path) => path.endsWith('.json'))) {
    const target = join(out, relative(src, file));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(file, target);
  }
}

async function buildOnce() {
  const files = sourceFiles();
  const stamp = stampOf(files);
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return;
  rmSync(out, { recursive: true, force: true });
  await esbuild.build(options(files));
  copyJson(files);
  writeFileSync(stampFile, stamp);
}

process.setSourceMapsEnabled(true);

if (!watch) {
  await buildOnce();
  await import(pathToFileURL(join(out, `${entry}.js`)).href);
} else {
  let child;
  const restart = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    child = spawn(process.execPath, ['--enable-source-maps', join(out, `${entry}.js`)], { stdio: 'inherit' });
  };
  // A context only watches the files it was made with: a new or removed file (looked for every second)
  // gets a new context.
  let files = sourceFiles();
  rmSync(out, { recursive: true, force: true });
  let context;
  const start = async () => {
    context = await esbuild.context({
      ...options(files),
      plugins: [
        {
          name: 'restart',
          setup(build) {
            build.onEnd(async (result) => {
              if (result.errors.length) return;
              copyJson(files);
              await restart();
            });
          },
        },
      ],
    });
    await context.watch();
  };
  await start();
  setInterval(async () => {
    const now = sourceFiles();
    if (now.join('\n') === files.join('\n')) return;
    files = now;
    await context.dispose();
    await start();
  }, 1000).unref();
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, async () => {
      await context.dispose();
      if (!child || child.exitCode !== null || child.signalCode !== null) process.exit(0);
      child.once('exit', (code) => process.exit(code ?? 0));
      child.kill(signal);
    });
  }
}
