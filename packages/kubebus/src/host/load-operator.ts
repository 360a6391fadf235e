// Loads an operator module from any project layout — ESM or CommonJS
// (package.json with or without "type": "module"), .ts/.mts/.cts or
// .js/.mjs/.cjs — and finds its operator: the default export, or the only
// exported operator. TypeScript loads through Node's own type stripping where
// the running Node has it (Node >= 22.18), else through tsx, an optional peer:
// what stripping cannot run (enums, namespaces, parameter properties) says
// "npm install tsx" in one line.
import { existsSync, statSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isOperator, type Operator } from '@kubebus/shared/definition';
import { describeLoadFailure, missingPackage } from './load-failure.js';
import { readModuleSyntaxAsModule } from './module-syntax.js';

export class OperatorLoadError extends Error {
  override readonly name = 'OperatorLoadError';
}

export async function loadOperator(file: string): Promise<Operator> {
  const path = resolve(file);
  if (!existsSync(path))
    throw new OperatorLoadError(`${file} does not exist: give the path of your operator module`);
  if (!statSync(path).isFile())
    throw new OperatorLoadError(
      `${file} is a directory: give the path of your operator module (its operator.ts)`,
    );
  let namespace: object;
  try {
    namespace = await importModule(path);
  } catch (error) {
    if (error instanceof OperatorLoadError) throw error;
    throw new OperatorLoadError(`cannot load ${file}: ${describeLoadFailure(error, path)}`, {
      cause: error,
    });
  }
  return pickOperator(file, moduleExports(namespace));
}

const TYPESCRIPT = /\.[mc]?ts$/;

/** The module's namespace, TypeScript through Node's type stripping when it has it, else tsx. */
async function importModule(path: string): Promise<object> {
  const url = pathToFileURL(path).href;
  if (!TYPESCRIPT.test(path)) return (await import(url)) as object;
  if (!nodeStripsTypes()) return await importWithTsx(url, path, undefined);
  readModuleSyntaxAsModule();
  try {
    return (await import(url)) as object;
  } catch (error) {
    // what type stripping cannot run (enums, namespaces, `./x.js` naming x.ts): tsx can
    if (!strippingFallsShort(error)) throw error;
    return await importWithTsx(url, path, error);
  }
}

async function importWithTsx(url: string, path: string, stripping: unknown): Promise<object> {
  let tsx: typeof import('tsx/esm/api');
  try {
    tsx = await import('tsx/esm/api');
  } catch {
    const file = relative(process.cwd(), path);
    throw new OperatorLoadError(
      stripping === undefined
        ? `cannot load ${file}: this Node (${process.version}) does not run TypeScript: npm install tsx, or use Node >= 22.18`
        : `cannot load ${file} with Node's type stripping (${describeLoadFailure(stripping, path)}): npm install tsx${
            esmSyntaxInCommonJs(stripping)
              ? ', or rename it .mts, or set "type": "module" in package.json'
              : ''
          }`,
    );
  }
  return (await tsx.tsImport(url, import.meta.url)) as object;
}

/** Node runs .ts itself (unflagged from 22.18 / 23.6, or --experimental-strip-types). */
function nodeStripsTypes(): boolean {
  const features = process.features as { typescript?: unknown };
  return features.typescript === 'strip' || features.typescript === 'transform';
}

function strippingFallsShort(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  // a package not installed: tsx would not find it either
  if (missingPackage(error) !== undefined) return false;
  return (
    code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX' ||
    code === 'ERR_MODULE_NOT_FOUND' ||
    code === 'MODULE_NOT_FOUND' ||
    code === 'ERR_UNKNOWN_FILE_EXTENSION' ||
    esmSyntaxInCommonJs(error)
  );
}

/** A .ts read as CommonJS (no "type": "module") that uses import/export. */
function esmSyntaxInCommonJs(error: unknown): boolean {
  return (
    error instanceof SyntaxError &&
    /Cannot use import statement outside a module|Unexpected token 'export'/.test(error.message)
  );
}

/**
 * What a module exports, however the loader handed it back: an ES module's
 * namespace; a CommonJS module's `module.exports` as the namespace's default
 * (and as 'module.exports' on newer Node); a compiled ES module inside that,
 * its own default at `module.exports.default` (`__esModule`).
 */
export function moduleExports(namespace: object): ModuleExports {
  const top = namespace as Record<string, unknown>;
  const layers: Record<string, unknown>[] = [top];
  // the layers known to be a module's exports, not just an object it exports as default
  const modules = new Set([top]);
  for (let layer = top; ;) {
    const viaModuleExports = layer['module.exports'] !== undefined;
    const inner = layer['module.exports'] ?? layer['default'];
    if (typeof inner !== 'object' || inner === null || isOperator(inner)) break;
    const next = inner as Record<string, unknown>;
    if (layers.includes(next) || layers.length >= 4) break;
    layers.push(next);
    if (viaModuleExports || next['__esModule'] === true) modules.add(next);
    layer = next;
  }
  const named = new Map<string, unknown>();
  const listed: string[] = [];
  for (const layer of layers)
    for (const [name, value] of Object.entries(layer)) {
      if (name === 'default' || name === '__esModule' || name === 'module.exports') continue;
      if (!named.has(name)) named.set(name, value);
      if (modules.has(layer) && !listed.includes(name)) listed.push(name);
    }
  const defaults = layers.map((layer) => layer['default']);
  const found = defaults.find(isOperator);
  if (found !== undefined) return { default: found, named, listed };
  // an export default that is not an operator (an object, a function, a value)
  const last = [...layers].reverse().find((layer) => modules.has(layer));
  if (last?.['default'] !== undefined) listed.unshift('default');
  return { default: undefined, named, listed };
}

export interface ModuleExports {
  /** the default export when it is an operator */
  readonly default: unknown;
  /** every export, searched for an operator */
  readonly named: ReadonlyMap<string, unknown>;
  /** the names the module exports, for a message */
  readonly listed: readonly string[];
}

function pickOperator(file: string, exports: ModuleExports): Operator {
  if (isOperator(exports.default)) return exports.default;
  const operators = [...new Set([...exports.named.values()].filter(isOperator))];
  const [operator] = operators;
  if (operator === undefined) {
    const names = exports.listed;
    const what =
      names.length === 0
        ? 'nothing'
        : names.slice(0, 8).join(', ') + (names.length > 8 ? ', …' : '');
    throw new OperatorLoadError(
      `${file} exports no operator (it exports ${what}): export default defineOperator({ ... })`,
    );
  }
  if (operators.length > 1)
    throw new OperatorLoadError(
      `${file} exports ${operators.length} operators: export the one to run as default`,
    );
  return operator;
}
