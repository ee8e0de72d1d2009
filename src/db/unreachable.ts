// Its own module, so that an entry point can recognise it without loading the database driver first.

/** The start cannot go on: which database was tried and why it failed, in one line a person can act on. */
export class DatabaseUnreachableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatabaseUnreachableError';
  }
}
