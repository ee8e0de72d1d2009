import { createGraphQLError, type Plugin } from 'graphql-yoga';

/**
 * What a POST to /graphql may carry: JSON (GraphQL over HTTP) or a multipart upload (the GraphQL
 * multipart request spec). Yoga would also run urlencoded forms and `application/graphql` bodies; a page
 * on any site may send those without a preflight, and neither spec defines them.
 */
const ACCEPTED = ['application/json', 'multipart/form-data'];

/** Refuses every other POST body with a 415 before anything is parsed. */
export function acceptedMediaTypes(): Plugin {
  return {
    onRequestParse({ request }) {
      if (request.method !== 'POST') return;
      // Matched as yoga's parsers match it: what passes here is what they parse.
      const contentType = request.headers.get('content-type')?.split(',')[0] ?? '';
      if (ACCEPTED.some((type) => contentType === type || contentType.startsWith(`${type};`))) return;
      const mediaType = contentType.split(';')[0]!.trim();
      throw createGraphQLError(
        `Unsupported media type "${mediaType}" in request: send application/json, or multipart/form-data to upload a file.`,
        { extensions: { code: 'UNSUPPORTED_MEDIA_TYPE', http: { status: 415 } } },
      );
    },
  };
}
