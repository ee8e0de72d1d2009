import { GraphQLError, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import {
  fieldPath,
  findUnsafeInput,
  jsonTextTooDeep,
  MAX_INPUT_DEPTH,
  textProblem,
  TOO_DEEP_MESSAGE,
  type UnsafeInput,
} from '../../services/input-safety.js';

// What /graphql refuses before it parses, coerces or executes anything: the checks every v1 body gets
// (src/services/input-safety.ts), applied to the JSON texts of the request, its variables and
// extensions, and the string literals of its document; a document nested deeper than any real one;
// and a request it cannot read at all is the client's 400, never an unexpected error.

/**
 * How deep the brackets of a document may nest: selections as deep as the query limits allow, with
 * arguments and input values as deep as any input. graphql-js parses recursively, and about 1,500
 * nested list literals overflow its stack well within the limit on tokens.
 */
const MAX_DOCUMENT_DEPTH = 2 * MAX_INPUT_DEPTH;
const DOCUMENT_TOO_DEEP = `Ensure the document is nested no more than ${MAX_DOCUMENT_DEPTH} levels deep.`;

const badInput = (message: string, fieldErrors?: Record<string, string[]>) =>
  new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', ...(fieldErrors ? { fieldErrors } : {}), http: { status: 400 } } });

const unsafe = (found: UnsafeInput, prefix: (string | number)[] = []) => {
  const path = fieldPath([...prefix, ...found.path]);
  return badInput(found.message, { [path]: [found.message] });
};

const badRequest = (message: string) => new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });

const JSON_MEDIA_TYPES = new Set(['application/json', 'application/graphql+json']);

const mediaTypeOf = (request: Request) => (request.headers.get('content-type') ?? '').split(/[;,]/)[0]!.trim().toLowerCase();

/** What the multipart request spec says `map` is: which variables each file part fills. */
const isFileMap = (map: unknown) =>
  map !== null &&
  typeof map === 'object' &&
  !Array.isArray(map) &&
  Object.values(map).every((paths) => Array.isArray(paths) && paths.every((path) => typeof path === 'string'));

const paramTexts = (params: URLSearchParams) => [params.get('variables'), params.get('extensions')];

/**
 * Refuses what the request parser would choke on, read from a copy of the request before the parser
 * reads it: JSON texts nested too deep (the parameters and form fields that hold JSON), and a multipart
 * `map` of another shape, which the parser walks without looking.
 */
async function checkBeforeParsing(request: Request): Promise<void> {
  const mediaType = mediaTypeOf(request);
  let texts: unknown[] = [];
  let map: unknown;
  if (request.method === 'GET') texts = paramTexts(new URL(request.url).searchParams);
  else if (mediaType === 'application/x-www-form-urlencoded') texts = paramTexts(new URLSearchParams(await request.clone().text()));
  else if (mediaType === 'multipart/form-data') {
    const form = await request.clone().formData();
    map = form.get('map');
    texts = [form.get('operations'), map];
  }
  if (texts.some((text) => typeof text === 'string' && jsonTextTooDeep(text))) throw badInput(TOO_DEEP_MESSAGE);
  if (typeof map === 'string' && !isFileMap(JSON.parse(map))) {
    throw badRequest('Multipart form field "map" must be an object whose values are lists of variable paths.');
  }
}

export const graphqlInput: Plugin = {
  onRequestParse({ requestParser, setRequestParser }) {
    if (!requestParser) return;
    setRequestParser(async (request) => {
      try {
        // A JSON body, the common case, is read once: the depth check and the parser take its text.
        if (request.method === 'POST' && JSON_MEDIA_TYPES.has(mediaTypeOf(request))) {
          const text = await request.text();
          if (jsonTextTooDeep(text)) throw badInput(TOO_DEEP_MESSAGE);
          return await requestParser({ json: async () => JSON.parse(text) } as Request);
        }
        await checkBeforeParsing(request);
        return await requestParser(request);
      } catch (error) {
        if (error instanceof GraphQLError) throw error;
        // A body or parameter that is not what its transport says (variables that are not JSON, a
        // multipart `map` that is not an object of lists) fails in the parser with a plain error.
        throw badRequest(`The request could not be read: ${(error as Error).message}`);
      }
    });
  },
  onParams({ params }) {
    const refused = paramsRefusal(params);
    if (refused) throw refused;
  },
  onValidate({ addValidationRule }) {
    addValidationRule(storableStringLiterals);
  },
};

/** Why a request's parameters are refused before anything reads them, or null when they are not. */
export function paramsRefusal(params: { query?: unknown; variables?: unknown; extensions?: unknown }): GraphQLError | null {
  if (typeof params.query === 'string' && documentTooDeep(params.query)) return badInput(DOCUMENT_TOO_DEEP);
  return valuesRefusal(params);
}

/** paramsRefusal without the document's depth: for a document already accepted once, by its exact text. */
export function valuesRefusal(params: { variables?: unknown; extensions?: unknown }): GraphQLError | null {
  const inVariables = findUnsafeInput(params.variables);
  if (inVariables) return unsafe(inVariables);
  const inExtensions = findUnsafeInput(params.extensions);
  if (inExtensions) return unsafe(inExtensions, ['extensions']);
  return null;
}

/** String literals of the document reach storage like variables do. */
const storableStringLiterals: ValidationRule = (context) => ({
  StringValue(node) {
    const problem = textProblem(node.value);
    if (problem) context.reportError(new GraphQLError(problem, { nodes: node, extensions: { code: 'BAD_USER_INPUT' } }));
  },
});

const BLOCK_QUOTE = '"""';

/** Whether the brackets of a document nest deeper than MAX_DOCUMENT_DEPTH, skipping strings and comments. */
function documentTooDeep(document: string): boolean {
  let depth = 0;
  for (let i = 0; i < document.length; i += 1) {
    const c = document[i];
    if (c === '#') {
      while (i < document.length && document[i] !== '\n' && document[i] !== '\r') i += 1;
    } else if (document.startsWith(BLOCK_QUOTE, i)) {
      // A block string ends at the next """ that is not escaped as \""".
      let end = document.indexOf(BLOCK_QUOTE, i + 3);
      while (end > 0 && document[end - 1] === '\\') end = document.indexOf(BLOCK_QUOTE, end + 3);
      if (end < 0) return false;
      i = end + 2;
    } else if (c === '"') {
      for (i += 1; i < document.length && document[i] !== '"' && document[i] !== '\n' && document[i] !== '\r'; i += 1) {
        if (document[i] === '\\') i += 1;
      }
    } else if (c === '{' || c === '[' || c === '(') {
      depth += 1;
      if (depth > MAX_DOCUMENT_DEPTH) return true;
    } else if (c === '}' || c === ']' || c === ')') depth -= 1;
  }
  return false;
}
