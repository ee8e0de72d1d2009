// `npm start`, `npm run dev` and `npm run worker`: run a TypeScript entry point of src/ as JavaScript.
//
//   node scripts/run.mjs main            bundle src/ into .run/start/ when it changed, then run main.js here
//   node scripts/run.mjs --build         only bundle .run/start/ (postinstall, so that a first start finds it)
//   node scripts/run.mjs --watch main    transpile into .run/watch/ on every change and restart the child running it
//
// A start runs a bundle: esbuild joins the entry points of src/ (its top-level files) and the packages
// they import into a few files, since loading some 1,800 modules one by one took Node over a second of
// a start. Bundling takes a few seconds, so postinstall does it and a start only when src/ changed. The
// watcher keeps one file per module, which it rewrites in milliseconds. Types are checked by `npm run
// typecheck`. The two modes have folders of their own, so a watcher never rewrites what a running server
// loads. The watcher is esbuild's own service, a child of this process, which reaps it and every server it
// starts.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import process from 'node:process';
import { setInterval } from 'node:timers';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

const args = process.argv.slice(2);
const mode = args[0] === '--watch' || args[0] === '--build' ? args[0] : 'run';
const entry = mode === 'run' ? args[0] : args[1];
const out = join(root, '.run', mode === '--watch' ? 'watch' : 'start');
const stampFile = join(out, '.stamp');
if (mode !== '--build' && (!entry || !existsSync(join(src, `${entry}.ts`)))) {
  process.stderr.write('Usage: node scripts/run.mjs [--watch] <entry of src/, e.g. main>, or node scripts/run.mjs --build\n');
  process.exit(2);
}

function sourceFiles() {
  return readdirSync(src, { recursive: true })
    .map((name) => join(src, String(name)))
    .filter((path) => /\.(ts|json)$/.test(path) && !path.endsWith('.d.ts'))
    .sort();
}

/** The list of files and their latest change: a new, removed or edited file (or launcher) changes it. */
function stampOf(files) {
  let latest = statSync(fileURLToPath(import.meta.url)).mtimeMs;
  for (const file of files) latest = Math.max(latest, statSync(file).mtimeMs);
  return `${latest}\n${files.map((file) => relative(src, file)).join('\n')}`;
}

const common = { outbase: src, format: 'esm', platform: 'node', target: 'node20.19', sourcemap: 'linked', logLevel: 'warning' };

/** The watcher's: each module of src/ as a module of its own. */
const watchOptions = (files) => ({ ...common, entryPoints: files.filter((file) => file.endsWith('.ts')), outdir: out });

/**
 * A start's: the top-level files of src/ and what they import, packages included, in shared chunks
 * (a module a worker thread runs, db/migrate-thread, then runs from its chunk). Bundled CommonJS
 * packages require Node's own modules through the banner's `require`. Packages that read files beside
 * their own modules (PGlite's WebAssembly, Swagger UI's assets, pino's transports), or that only tools
 * load, stay in node_modules. Source maps name the files of src/ and node_modules without copying them.
 */
const bundleOptions = (files, outdir) => ({
  ...common,
  entryPoints: files.filter((file) => file.endsWith('.ts') && dirname(file) === src),
  outdir,
  bundle: true,
  splitting: true,
  sourcesContent: false,
  external: ['@electric-sql/pglite', 'swagger-ui-dist', 'pino', 'esbuild', 'tsx', '@prisma/schema-engine-wasm'],
  banner: { js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);" },
});

/** JSON data is imported with `with { type: 'json' }`, which wants the file itself beside the module. */
function copyJson(files) {
  for (const file of files.filter((path) => path.endsWith('.json'))) {
    const target = join(out, relative(src, file));
    mkdirSync(dirname(target), { recursive: true });
    cpSync(file, target);
  }
}

const current = (stamp) => existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp;

/**
 * Bundles src/ into .run/start/ unless it is current. Built aside and then moved in, so that a start
 * never runs half a bundle; a start that finds another's current bundle moved in meanwhile keeps that one.
 */
async function buildOnce() {
  const files = sourceFiles();
  const stamp = stampOf(files);
  if (current(stamp)) return;
  process.stdout.write('Bundling src/ into .run/start/ (it changed since the last build)…\n');
  const esbuild = await import('esbuild');
  const building = `${out}.${process.pid}`;
  rmSync(building, { recursive: true, force: true });
  await esbuild.build(bundleOptions(files, building));
  writeFileSync(join(building, '.stamp'), stamp);
  if (current(stamp)) rmSync(building, { recursive: true, force: true });
  else {
    rmSync(out, { recursive: true, force: true });
    renameSync(building, out);
  }
}

process.setSourceMapsEnabled(true);

if (mode === '--build') {
  await buildOnce();
} else if (mode === 'run') {
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
  const esbuild = await import('esbuild');
  let files = sourceFiles();
  rmSync(out, { recursive: true, force: true });
  let context;
  const start = async () => {
    context = await esbuild.context({
      ...watchOptions(files),
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
