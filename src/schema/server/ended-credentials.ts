import { GraphQLError, type ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { KeyWatch } from '../../services/api-keys/watch.js';
import type { Principal } from '../../services/context.js';
import type { GraphQLContext } from '../context.js';

/**
 * A subscription lasts no longer than the credential it was opened with: an API key's ends once the key
 * is revoked or expires (services/api-keys/watch.ts says how soon), a token's at the token's `exp`. A last
 * event carries an UNAUTHENTICATED error, then the stream completes.
 */
export function subscriptionsEndWithCredentials(watch: KeyWatch): Plugin<GraphQLContext> {
  return {
    onSubscribe({ args }) {
      const end = credentialEnd(args.contextValue.user, watch);
      if (!end) return;
      return {
        onSubscribeResult({ result, setResult }) {
          if (isAsyncIterable(result)) setResult(new EndsWithCredential(result[Symbol.asyncIterator](), end));
        },
      };
    },
  };
}

interface CredentialEnd {
  /** Calls `ended` when the credential ends; returns what stops watching. */
  watch(ended: () => void): () => void;
  last: ExecutionResult;
}

const KEY_ENDED: ExecutionResult = {
  errors: [
    new GraphQLError('The API key this subscription was opened with was revoked or expired: the subscription has ended.', {
      extensions: { code: 'UNAUTHENTICATED' },
    }),
  ],
};

const TOKEN_EXPIRED: ExecutionResult = {
  errors: [
    new GraphQLError('The token this subscription was opened with has expired: the subscription has ended.', {
      // As a request with an expired token is told: get a fresh token, then subscribe again.
      extensions: { code: 'UNAUTHENTICATED', reason: 'token_expired' },
    }),
  ],
};

/** setTimeout's longest delay; a later end is waited for in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

function credentialEnd(user: Principal, keys: KeyWatch): CredentialEnd | null {
  const keyId = user.apiKey?.id;
  if (keyId) return { watch: (ended) => keys.watch(keyId, ended), last: KEY_ENDED };
  const expiresAt = user.tokenExpiresAt?.getTime();
  if (expiresAt === undefined) return null;
  return {
    watch(ended) {
      let timer: NodeJS.Timeout;
      const wait = () => {
        const left = expiresAt - Date.now();
        if (left <= 0) return ended();
        timer = setTimeout(wait, Math.min(left, MAX_TIMER_MS));
      };
      wait();
      return () => clearTimeout(timer);
    },
    last: TOKEN_EXPIRED,
  };
}

/**
 * The subscription's results until the credential ends, then its last event. A class rather than an
 * async generator, so that the end, or `return()` when the client leaves, ends a pending `next()` at once.
 */
class EndsWithCredential implements AsyncIterableIterator<ExecutionResult> {
  readonly #ended: Promise<'ended'>;
  readonly #stopWatching: () => void;
  readonly #last: ExecutionResult;
  #done = false;

  constructor(
    private readonly source: AsyncIterator<ExecutionResult>,
    end: CredentialEnd,
  ) {
    let ended!: () => void;
    this.#ended = new Promise((resolve) => (ended = () => resolve('ended')));
    this.#stopWatching = end.watch(ended);
    this.#last = end.last;
  }

  async next(): Promise<IteratorResult<ExecutionResult>> {
    if (this.#done) return { done: true, value: undefined };
    const step = await Promise.race([this.source.next(), this.#ended]);
    if (this.#done) return { done: true, value: undefined };
    if (step === 'ended') {
      await this.#finish();
      return { done: false, value: this.#last };
    }
    if (step.done) await this.#finish();
    return step;
  }

  async return(): Promise<IteratorResult<ExecutionResult>> {
    await this.#finish();
    return { done: true, value: undefined };
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async #finish(): Promise<void> {
    if (this.#done) return;
    this.#done = true;
    this.#stopWatching();
    await this.source.return?.();
  }
}
