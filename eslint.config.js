// Type-aware lint rules for the whole workspace; see ../shared/STYLE.md.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

// The layers (docs/architecture.md): each workspace imports only those below
// it. Flat config replaces a rule's options file by file, so every scope
// lists all that it may not import. test/integration/layers.test.ts checks
// the same, dynamic imports and package.json dependencies included.
const SERVICES = ['watcher', 'reconciler', 'status-writer', 'cli'];
const ROLES_OR_PACKAGE = {
  regex: `^(kubebus|@kubebus/(${SERVICES.join('|')}))(/|$)`,
  message: 'shared/ is the bottom layer: it imports no service and not the public package.',
};
const OUT_OF_SHARED = {
  regex: '^(\\.\\./)+(services|packages|examples|test)(/|$)',
  message: 'shared/ imports only itself and npm packages.',
};
const SHARED = [ROLES_OR_PACKAGE, OUT_OF_SHARED];
const restricted = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] });
/** What services/<name> may not import: the public package, another service, an example. */
const servicePatterns = (name) => {
  const others = SERVICES.filter((other) => other !== name).join('|');
  return [
    {
      regex: '^kubebus(/|$)',
      message: 'A service sits below the public package: import @kubebus/shared/* instead.',
    },
    {
      regex: `^(@kubebus/(${others})|(\\.\\./)+(services/)?(${others}))(/|$)`,
      message: 'A service imports no other service: what they share lives in shared/.',
    },
    {
      regex: '(^|/)(examples|packages|test)(/|$)',
      message: 'A service names no example, test or package: the host passes the operator in.',
    },
  ];
};
const layers = [
  { files: ['shared/**/*.ts'], rules: restricted(SHARED) },
  {
    // the bottom of shared: the vocabulary, nothing but error codes below it
    files: ['shared/src/definition/**/*.ts'],
    rules: restricted([
      ...SHARED,
      {
        regex: '^(@kubebus/shared/|(\\.\\./)+)(bus|kube|runtime|events|obs|config)(/|$)',
        message: 'The definition API imports only ../errors from shared/.',
      },
    ]),
  },
  {
    // the runtime knows neither the transport nor Kubernetes (its tests may use their errors)
    files: ['shared/src/runtime/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: restricted([
      ...SHARED,
      {
        regex: '^(@kubebus/shared/|(\\.\\./)+)(bus|kube)(/|$)',
        message: 'The runtime depends on neither bus nor kube: adapters plug into it.',
      },
    ]),
  },
  ...SERVICES.map((name) => ({
    files: [`services/${name}/**/*.ts`],
    rules: restricted(servicePatterns(name)),
  })),
  {
    files: ['examples/**/*.ts'],
    rules: restricted([
      {
        regex: '^@kubebus/',
        message: 'Examples use the public API only: import from kubebus.',
      },
    ]),
  },
];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', 'eslint.config.js'] },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          // node:test's describe/it return promises the runner itself awaits
          allowForKnownSafeCalls: [
            { from: 'package', package: 'node:test', name: ['describe', 'it', 'test', 'suite'] },
          ],
        },
      ],
      // @kubernetes/client-node's model "classes" are plain data; literals are how they are built
      '@typescript-eslint/no-unsafe-class-instance-assignment': 'off',
      // async implementations of promise-returning interfaces need no await
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true }],
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Tests probe data from real servers whose typings promise more than the
    // wire does; optional chains there are deliberate.
    files: ['test/**/*.ts', '**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-unnecessary-condition': 'off',
      '@typescript-eslint/use-unknown-in-catch-callback-variable': 'off',
      '@typescript-eslint/no-confusing-void-expression': 'off',
    },
  },
  ...layers,
);
