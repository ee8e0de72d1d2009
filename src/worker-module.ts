// Worker threads (through piscina) run a module of their own: its compiled .js file in production, and
// its .ts source under npm start and the tests, which the thread loads through tsx.

const fromSource = import.meta.url.endsWith('.ts');

/** Piscina's options for threads that run the module `name` next to `from` (an import.meta.url). */
export function workerModule(name: string, from: string): { filename: string; execArgv?: string[] } {
  return fromSource
    ? { filename: new URL(`${name}.ts`, from).href, execArgv: ['--import', 'tsx'] }
    : { filename: new URL(`${name}.js`, from).href };
}
