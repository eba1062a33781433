import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'data/', 'test/artifacts/', '.exp/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      eqeqeq: ['error', 'always'],
    },
  },
  // Plain JavaScript run by Node itself (bin/): Node's globals.
  { files: ['bin/**/*.js'], languageOptions: { globals: { process: 'readonly', URL: 'readonly' } } },
  // The pages' scripts (src/**/assets/), run by browsers: the browser's globals.
  {
    files: ['src/**/assets/*.js'],
    languageOptions: {
      globals: Object.fromEntries(['document', 'navigator'].map((name) => [name, 'readonly'])),
    },
  },
  // The examples for app developers (docs/examples/): plain JavaScript for Node, with its globals.
  {
    files: ['docs/examples/**/*.{js,mjs}'],
    languageOptions: {
      globals: Object.fromEntries(
        ['process', 'console', 'Buffer', 'fetch', 'URL', 'URLSearchParams', 'setTimeout'].map((name) => [
          name,
          'readonly',
        ]),
      ),
    },
  },
);
