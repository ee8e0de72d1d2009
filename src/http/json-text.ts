// An answer's JSON text built before it reaches the HTTP layer (a statement that writes v1's bytes), in
// the bytes JSON.stringify would print for a value of T: written out as it is.
export class JsonText<T = unknown> {
  declare readonly of?: T;
  constructor(readonly text: string) {}
}

/** The JSON text of an answer's body. */
export const jsonBody = (body: unknown) => (body instanceof JsonText ? body.text : JSON.stringify(body));
