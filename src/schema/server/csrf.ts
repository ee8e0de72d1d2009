import { useCSRFPrevention } from '@graphql-yoga/plugin-csrf-prevention';
import { createGraphQLError, type Plugin } from 'graphql-yoga';

/**
 * Yoga's CSRF prevention (a GET query or a multipart upload, which browsers send without a preflight,
 * must carry a custom header), refusing with a message that names the header and a code like every
 * other error.
 */
export function csrfPrevention(header: string): Plugin {
  const check = useCSRFPrevention({ requestHeaders: [header] }).onRequestParse!;
  return {
    onRequestParse(payload) {
      try {
        return check(payload);
      } catch {
        throw createGraphQLError(
          `Required CSRF header not present: send the ${header} header (any value) with GET requests and multipart uploads.`,
          { extensions: { code: 'CSRF_HEADER_MISSING', http: { status: 403 } } },
        );
      }
    },
  };
}
