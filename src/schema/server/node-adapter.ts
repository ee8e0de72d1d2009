// Yoga answers with its own Response class, which the Node adapter can only read back as a stream; a
// body Yoga holds as text is handed on as text, which the adapter writes in one call.

/** Yoga's Response, as a Response the Node adapter writes in one call when Yoga holds its body as text. */
export function adapterResponse(response: Response): Response {
  const body = (response as { bodyInit?: unknown }).bodyInit;
  return typeof body === 'string' ? new Response(body, { status: response.status, headers: new Headers(response.headers) }) : response;
}
