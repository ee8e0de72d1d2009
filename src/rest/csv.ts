import type { Logger } from 'pino';
import type { ServiceContext } from '../services/context.js';
import type { RouteDefinition, RouteInput } from './route.js';

// CSV as RFC 4180 writes it (comma-separated, CRLF line ends, a field quoted when it holds a comma, a
// quote or a line break, quotes doubled), with a header row of the v1 field names. A cell a spreadsheet
// would run as a formula (one starting with =, +, -, @, a tab or a carriage return) starts with a single
// quote instead, except an E.164 number, which is only digits after its +.

const FORMULA_START = /^[=+\-@\t\r]/;
const E164 = /^\+\d{1,15}$/;
const NEEDS_QUOTES = /[",\r\n]/;

export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  let text = value instanceof Date ? value.toISOString() : String(value);
  if (FORMULA_START.test(text) && !E164.test(text)) text = `'${text}`;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

const line = (cells: unknown[]) => `${cells.map(csvCell).join(',')}\r\n`;

/**
 * The rows of `batches` under a header of `columns`, as a stream that reads the next batch only when the
 * client has taken the previous one: memory stays that of one batch. `first` is the batch already read
 * (so that a refusal, such as another customer's campaign, was answered before any byte was sent).
 */
export function csvStream(
  columns: readonly string[],
  first: IteratorResult<Record<string, unknown>[]>,
  rest: AsyncIterator<Record<string, unknown>[]>,
  log: Logger,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next: IteratorResult<Record<string, unknown>[]> | undefined = first;
  return new ReadableStream({
    start(controller) {
      controller.enqueue(encoder.encode(line([...columns])));
    },
    async pull(controller) {
      try {
        const batch = next ?? (await rest.next());
        next = undefined;
        if (batch.done) {
          controller.close();
          return;
        }
        controller.enqueue(encoder.encode(batch.value.map((row) => line(columns.map((c) => row[c]))).join('')));
      } catch (error) {
        // The status went out with the header row: all that is left is to cut the response short.
        log.error({ err: error }, 'CSV export failed part way');
        controller.error(error);
      }
    },
    async cancel() {
      await rest.return?.(undefined);
    },
  });
}

/** The route's rows as a CSV download; a refusal before the first row is answered as any other. */
export async function csvResponse(
  csv: NonNullable<RouteDefinition['csv']>,
  input: RouteInput<unknown, unknown, unknown>,
  ctx: ServiceContext,
) {
  const rows = csv.rows(input, ctx)[Symbol.asyncIterator]();
  const first = await rows.next();
  return new Response(csvStream(csv.columns, first, rows, ctx.log), {
    status: 200,
    headers: {
      'content-type': 'text/csv; charset=utf-8',
      'content-disposition': `attachment; filename="${csv.filename}"`,
      // A customer's data, fetched with a token or a link that is itself the credential: no cache keeps it.
      'cache-control': 'no-store',
    },
  });
}
