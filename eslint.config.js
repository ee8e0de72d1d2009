import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// Stores (src/services/<domain>/store.ts or a store/ folder) and src/db are the only modules that talk to
// the database. Everywhere else a database call is a lint error, so a rule cannot grow a second data path.
// Services still open transactions (ctx.sql.transaction): where one begins and ends is a rule.
// The Prisma client's model delegates (prisma/schema.prisma's models, first letter lower-cased).
const PRISMA_MODELS = readFileSync(fileURLToPath(import.meta.resolve('./prisma/schema.prisma')), 'utf8')
  .split('\n')
  .flatMap((line) => /^model (\w+)/.exec(line)?.[1] ?? [])
  .map((model) => model[0].toLowerCase() + model.slice(1))
  .join('|');

const databaseCalls = [
  {
    selector: 'CallExpression[callee.property.name=/^\\$(queryRaw|queryRawUnsafe|executeRaw|executeRawUnsafe|transaction)$/]',
    message: 'Only a store may send SQL or open a transaction: add a function to the domain store.',
  },
  {
    selector: `MemberExpression[object.property.name=/^(db|prisma)$/][property.name=/^(${PRISMA_MODELS})$/]`,
    message: 'Only a store may use the Prisma client: add a function to the domain store.',
  },
  {
    selector:
      "CallExpression[callee.type='MemberExpression'][callee.property.name=/^(run|query|copyInto)$/][callee.object.property.name='sql']",
    message: 'Only a store may run SQL: add a function to the domain store.',
  },
  {
    selector: 'CallExpression[callee.name=/^(statement|dynamicStatement)$/]',
    message: 'Statements are declared in a store.',
  },
];

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      '.run/**',
      'node_modules/**',
      'src/generated/**',
      'test/generated/**',
      'console/dist/**',
      'console/src/gql/**',
      'coverage/**',
      '.ci/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-empty-object-type': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true },
      ],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-empty': ['error', { allowEmptyCatch: true }],
      // A test's fake often reads (in a closure) the object it is handed to, declared before it.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: ['src/db/**', 'src/services/**/store.ts', 'src/services/**/store/**', 'src/cli/**'],
    rules: {
      'no-restricted-syntax': ['error', ...databaseCalls],
      'no-restricted-imports': [
        'error',
        {
          paths: [
            { name: 'pg', message: 'Only src/db and the stores use node-postgres.' },
            { name: 'pg-copy-streams', message: 'Only src/db uses COPY streams.' },
          ],
          patterns: [
            {
              regex: 'db/sql\\.js$',
              allowImportNames: ['SqlSession', 'SqlTransaction', 'Sql', 'copyText', 'ping'],
              message: 'Statements are declared and run in a store; other modules pass sessions along.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['test/**/*.ts', 'bench/**/*.ts', 'scripts/**/*.ts'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off' },
  },
);
