import { GraphQLError, GraphQLScalarType } from 'graphql';

// A file of a GraphQL multipart request. Anything else where a file is expected (a string in the
// variables, a form field that is not a file) is the client's error, not a File to read.

const NOT_A_FILE = 'Expected a file, sent as a part of a GraphQL multipart request.';

const notAFile = () => new GraphQLError(NOT_A_FILE, { extensions: { code: 'BAD_USER_INPUT' } });

/**
 * Read by its shape: yoga's multipart parser may hand over its fetch library's File rather than Node's.
 * Values from JSON never carry methods, so no variable can pass for one.
 */
const isFile = (value: unknown): value is File =>
  typeof value === 'object' && value !== null && typeof (value as File).text === 'function' && typeof (value as File).size === 'number';

export const FileScalar = new GraphQLScalarType<File, never>({
  name: 'File',
  description: 'A file sent with a GraphQL multipart request (graphql-multipart-request-spec).',
  serialize: () => {
    throw new Error('File is an input-only scalar');
  },
  parseValue: (value) => {
    if (!isFile(value)) throw notAFile();
    return value;
  },
  parseLiteral: () => {
    throw notAFile();
  },
});
