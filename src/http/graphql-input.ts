import { GraphQLError, type ValidationRule } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { fieldPath, findUnsafeInput, jsonTextTooDeep, textProblem, TOO_DEEP_MESSAGE, type UnsafeInput } from '../services/input-safety.js';

// What /graphql refuses before it parses, coerces or executes anything: the checks every v1 body gets
// (src/services/input-safety.ts), applied to the JSON texts of the request, its variables and
// extensions, and the string literals of its document; and a request it cannot read at all is the
// client's 400, never an unexpected error.

const badInput = (message: string, fieldErrors?: Record<string, string[]>) =>
  new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT', ...(fieldErrors ? { fieldErrors } : {}), http: { status: 400 } } });

const unsafe = (found: UnsafeInput, prefix: (string | number)[] = []) => {
  const path = fieldPath([...prefix, ...found.path]);
  return badInput(found.message, { [path]: [found.message] });
};

const badRequest = (message: string) => new GraphQLError(message, { extensions: { code: 'BAD_REQUEST', http: { status: 400 } } });

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
 * reads it: JSON texts nested too deep (the body, or the parameters and form fields that hold JSON),
 * and a multipart `map` of another shape, which the parser walks without looking.
 */
async function checkBeforeParsing(request: Request): Promise<void> {
  const mediaType = mediaTypeOf(request);
  let texts: unknown[] = [];
  let map: unknown;
  if (request.method === 'GET') texts = paramTexts(new URL(request.url).searchParams);
  else if (mediaType === 'application/json' || mediaType === 'application/graphql+json') texts = [await request.clone().text()];
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
    const inVariables = findUnsafeInput(params.variables);
    if (inVariables) throw unsafe(inVariables);
    const inExtensions = findUnsafeInput(params.extensions);
    if (inExtensions) throw unsafe(inExtensions, ['extensions']);
  },
  onValidate({ addValidationRule }) {
    addValidationRule(storableStringLiterals);
  },
};

/** String literals of the document reach storage like variables do. */
const storableStringLiterals: ValidationRule = (context) => ({
  StringValue(node) {
    const problem = textProblem(node.value);
    if (problem) context.reportError(new GraphQLError(problem, { nodes: node, extensions: { code: 'BAD_USER_INPUT' } }));
  },
});
