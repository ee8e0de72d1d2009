import { GraphQLError, type ExecutionResult } from 'graphql';
import { isAsyncIterable, type Plugin } from 'graphql-yoga';
import type { KeyWatch } from '../../services/api-keys/watch.js';
import type { GraphQLContext } from '../context.js';

/**
 * A subscription opened with an API key ends once the key is revoked or expires (services/api-keys/watch.ts
 * says how soon): a last event carries an UNAUTHENTICATED error, then the stream completes.
 */
export function revokedKeysEndSubscriptions(watch: KeyWatch): Plugin<GraphQLContext> {
  return {
    onSubscribe({ args }) {
      const keyId = args.contextValue.user.apiKey?.id;
      if (!keyId) return;
      return {
        onSubscribeResult({ result, setResult }) {
          if (isAsyncIterable(result)) setResult(new EndsWithKey(result[Symbol.asyncIterator](), watch, keyId));
        },
      };
    },
  };
}

const KEY_ENDED: ExecutionResult = {
  errors: [
    new GraphQLError('The API key this subscription was opened with was revoked or expired: the subscription has ended.', {
      extensions: { code: 'UNAUTHENTICATED' },
    }),
  ],
};

/**
 * The subscription's results until the key ends, then KEY_ENDED. A class rather than an async generator,
 * so that the key's end, or `return()` when the client leaves, ends a pending `next()` at once.
 */
class EndsWithKey implements AsyncIterableIterator<ExecutionResult> {
  readonly #ended: Promise<'ended'>;
  readonly #stopWatching: () => void;
  #done = false;

  constructor(
    private readonly source: AsyncIterator<ExecutionResult>,
    watch: KeyWatch,
    keyId: string,
  ) {
    let ended!: () => void;
    this.#ended = new Promise((resolve) => (ended = () => resolve('ended')));
    this.#stopWatching = watch.watch(keyId, ended);
  }

  async next(): Promise<IteratorResult<ExecutionResult>> {
    if (this.#done) return { done: true, value: undefined };
    const step = await Promise.race([this.source.next(), this.#ended]);
    if (this.#done) return { done: true, value: undefined };
    if (step === 'ended') {
      await this.#finish();
      return { done: false, value: KEY_ENDED };
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
