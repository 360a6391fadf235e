// Operator modules load from any project layout: ESM and CommonJS projects
// (package.json with "type": "module", or none as `npm init -y` writes), each
// of .ts, .mts, .cts, .js, .mjs, .cjs, and TypeScript compiled to CommonJS;
// and each failure (missing file, syntax error, no operator) is one line.
// The projects are written to a temporary directory, kubebus and zod linked in.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadOperator, moduleExports, OperatorLoadError } from './load-operator.js';

const packageDir = fileURLToPath(new URL('../..', import.meta.url));
const zodDir = dirname(fileURLToPath(import.meta.resolve('zod/package.json')));
const root = mkdtempSync(join(tmpdir(), 'kubebus-load-'));
after(() => rmSync(root, { recursive: true, force: true }));

const resource = (kind: string) =>
  `defineResource({ group: 'layouts.example.com', version: 'v1', kind: '${kind}', scope: 'Namespaced', spec: z.object({ size: z.int() }), status: z.object({ ok: z.boolean() }) })`;
const reconcile = 'async reconcile() { return {}; }';

/** ES module syntax, as TypeScript and modern JavaScript are written. */
const esm = (kind: string, typed: boolean) =>
  [
    "import { defineOperator, defineResource } from 'kubebus';",
    "import { z } from 'zod';",
    `export const ${kind} = ${resource(kind)};`,
    typed ? 'const size: number = 1;\nexport { size };' : 'export const size = 1;',
    `export default defineOperator({ name: '${kind.toLowerCase()}', for: ${kind}, ${reconcile} });`,
  ].join('\n');

/** CommonJS as hand-written: module.exports is the operator. */
const cjs = (kind: string) =>
  [
    "const { defineOperator, defineResource } = require('kubebus');",
    "const { z } = require('zod');",
    `const ${kind} = ${resource(kind)};`,
    `module.exports = defineOperator({ name: '${kind.toLowerCase()}', for: ${kind}, ${reconcile} });`,
  ].join('\n');

/** What tsc emits for an ES module compiled to CommonJS: the operator at exports.default. */
const compiled = (kind: string) =>
  [
    '"use strict";',
    'Object.defineProperty(exports, "__esModule", { value: true });',
    `exports.${kind} = void 0;`,
    "const kubebus_1 = require('kubebus');",
    "const zod_1 = require('zod');",
    `exports.${kind} = ${resource(kind)
      .replace(/defineResource/, '(0, kubebus_1.defineResource)')
      .replace(/z\./g, 'zod_1.z.')};`,
    `exports.default = (0, kubebus_1.defineOperator)({ name: '${kind.toLowerCase()}', for: exports.${kind}, ${reconcile} });`,
  ].join('\n');

let projects = 0;
/** A project directory with this package.json type (none: CommonJS) and files. */
function project(type: 'module' | 'commonjs' | undefined, files: Record<string, string>): string {
  const dir = join(root, `p${++projects}`);
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  const manifest = {
    name: `p${projects}`,
    version: '1.0.0',
    main: 'index.js',
    ...(type && { type }),
  };
  writeFileSync(join(dir, 'package.json'), JSON.stringify(manifest));
  symlinkSync(packageDir, join(dir, 'node_modules', 'kubebus'), 'dir');
  symlinkSync(zodDir, join(dir, 'node_modules', 'zod'), 'dir');
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

/** Each extension in each project type, with the syntax a user writes there. */
const LAYOUTS: {
  type: 'module' | 'commonjs' | undefined;
  file: string;
  text: (kind: string) => string;
}[] = [
  { type: 'module', file: 'op.ts', text: (k) => esm(k, true) },
  { type: 'module', file: 'op.mts', text: (k) => esm(k, true) },
  { type: 'module', file: 'op.cts', text: (k) => esm(k, true) },
  { type: 'module', file: 'op.js', text: (k) => esm(k, false) },
  { type: 'module', file: 'op.mjs', text: (k) => esm(k, false) },
  { type: 'module', file: 'op.cjs', text: cjs },
  { type: undefined, file: 'op.ts', text: (k) => esm(k, true) },
  { type: undefined, file: 'op.mts', text: (k) => esm(k, true) },
  { type: undefined, file: 'op.cts', text: (k) => esm(k, true) },
  { type: undefined, file: 'op.js', text: cjs },
  { type: undefined, file: 'op.mjs', text: (k) => esm(k, false) },
  { type: undefined, file: 'op.cjs', text: cjs },
  { type: undefined, file: 'compiled.js', text: compiled },
  { type: 'module', file: 'compiled.cjs', text: compiled },
  // what `npm init -y` writes on npm >= 11
  { type: 'commonjs', file: 'op.ts', text: (k) => esm(k, true) },
  { type: 'commonjs', file: 'op.js', text: cjs },
];

describe('loadOperator', () => {
  for (const [i, layout] of LAYOUTS.entries()) {
    const kind = `Layout${i}`;
    it(`loads ${layout.file} from ${layout.type === 'module' ? 'an ES module' : 'a CommonJS'} project (type ${layout.type ?? 'unset'})`, async () => {
      const dir = project(layout.type, { [layout.file]: layout.text(kind) });
      const operator = await loadOperator(join(dir, layout.file));
      assert.equal(operator.name, kind.toLowerCase());
    });
  }

  it('takes the only exported operator when there is no default', async () => {
    const text = esm('Named', true).replace(
      'export default defineOperator',
      'export const op = defineOperator',
    );
    const dir = project(undefined, { 'op.ts': text });
    assert.equal((await loadOperator(join(dir, 'op.ts'))).name, 'named');
  });

  it('says, in one line, that a file does not exist', async () => {
    await assert.rejects(loadOperator(join(root, 'nope.ts')), (error: Error) => {
      assert.ok(error instanceof OperatorLoadError);
      assert.match(
        error.message,
        /nope\.ts does not exist: give the path of your operator module$/,
      );
      return true;
    });
  });

  for (const file of ['bad.ts', 'bad.mjs', 'bad.js']) {
    it(`names the line of a syntax error in ${file}`, async () => {
      const dir = project(file === 'bad.js' ? undefined : 'module', {
        [file]: 'export const a = 1;\nconst b = ;\n',
      });
      await assert.rejects(loadOperator(join(dir, file)), (error: Error) => {
        assert.ok(error instanceof OperatorLoadError);
        assert.doesNotMatch(error.message, /\n/);
        assert.match(
          error.message,
          new RegExp(
            `^cannot load .*${file.replace('.', '\\.')}: SyntaxError: .*\\(.*${file.replace('.', '\\.')}:2(:\\d+)?\\)$`,
          ),
        );
        return true;
      });
    });
  }

  it('says what a module without an operator does export', async () => {
    const dir = project(undefined, {
      'none.ts': 'export const a = 1;\nexport function helper() {}\n',
    });
    await assert.rejects(loadOperator(join(dir, 'none.ts')), {
      message:
        /none\.ts exports no operator \(it exports a, helper\): export default defineOperator/,
    });
    const object = project('module', { 'object.mjs': 'export default { a: 1, b: 2 };\n' });
    await assert.rejects(loadOperator(join(object, 'object.mjs')), {
      message: /object\.mjs exports no operator \(it exports default\): /,
    });
    const empty = project('module', { 'empty.mjs': '' });
    await assert.rejects(loadOperator(join(empty, 'empty.mjs')), {
      message: /exports no operator \(it exports nothing\)/,
    });
  });

  it('gives the first line of an error the module throws, where, and what to do', async () => {
    const dir = project('module', {
      'throws.mjs': "const a = 1;\nthrow new Error('boom\\nand more');\n",
    });
    await assert.rejects(loadOperator(join(dir, 'throws.mjs')), {
      message:
        /^cannot load .*throws\.mjs: boom \(.*throws\.mjs:2\): the module threw while loading; fix it there$/,
    });
  });

  it('names the package to install when an import is missing, and a directory given for a module', async () => {
    const dir = project('module', {
      'imports.mjs': "import '@example/not-installed/sub';\nexport default 1;\n",
    });
    await assert.rejects(loadOperator(join(dir, 'imports.mjs')), {
      message:
        /^cannot load .*imports\.mjs: .*'@example\/not-installed.*: npm install @example\/not-installed$/,
    });
    // a TypeScript module too: the package is missing, not tsx
    const typed = project(undefined, {
      'imports.ts': "import 'not-installed-xyz';\nexport default 1;\n",
    });
    await assert.rejects(loadOperator(join(typed, 'imports.ts')), {
      message:
        /^cannot load .*imports\.ts: .*'not-installed-xyz'.*: npm install not-installed-xyz$/,
    });
    // a relative file that is missing is node's own line, with no location of node's
    const relative = project('module', { 'relative.mjs': "import './gone.mjs';\n" });
    await assert.rejects(loadOperator(join(relative, 'relative.mjs')), {
      message:
        /^cannot load .*relative\.mjs: Cannot find module '.*gone\.mjs' imported from [^()]*$/,
    });
    await assert.rejects(loadOperator(dir), {
      message: /is a directory: give the path of your operator module \(its operator\.ts\)$/,
    });
  });
});

describe('moduleExports', () => {
  const operator = { kubebus: 'operator/v1', name: 'x' };
  it('unwraps a CommonJS namespace down to a compiled module', () => {
    const inner = { __esModule: true, default: operator, Widget: 1 };
    const found = moduleExports({ default: inner, Widget: 1 });
    assert.equal(found.default, operator);
    assert.deepEqual([...found.named.keys()], ['Widget']);
    assert.equal(moduleExports({ 'module.exports': inner, default: inner }).default, operator);
  });
});

describe('kubebus generate in a CommonJS project', () => {
  it('prints the CRD of an operator.ts written with import/export', async () => {
    const dir = project(undefined, { 'op.ts': esm('Widget', true) });
    const main = join(packageDir, 'src', 'cli', 'main.ts');
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--conditions=source', '--import', import.meta.resolve('tsx'), main, 'generate', 'op.ts'],
      { cwd: dir, encoding: 'utf8' },
    );
    assert.match(stdout, /kind: CustomResourceDefinition/);
    assert.match(stdout, /name: widgets\.layouts\.example\.com/);
  });
});
