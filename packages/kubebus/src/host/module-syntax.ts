// A .ts written with import/export in a CommonJS project ("type": "commonjs",
// what `npm init -y` writes) fails under Node's type stripping: Node reads it
// as CommonJS. Node already re-reads such a file as an ES module when
// package.json names no type (syntax detection); this hook does the same for
// an explicit "commonjs", so the user's operator loads without tsx.

// a namespace import: Node below 22.15 has no registerHooks, and must still start
import * as nodeModule from 'node:module';

/** import or export at the start of a line: ES module syntax (a require() file has neither) */
const MODULE_SYNTAX = /^[ \t]*(import[\s{*'"]|export[\s{*])/m;

let registered = false;

/** From now on, a project's .ts read as CommonJS that uses import/export loads as an ES module. */
export function readModuleSyntaxAsModule(): void {
  if (registered || typeof nodeModule.registerHooks !== 'function') return;
  registered = true;
  nodeModule.registerHooks({
    load(url, context, nextLoad) {
      const loaded = nextLoad(url, context);
      if (loaded.format !== 'commonjs-typescript' || !isProjectTs(url)) return loaded;
      const { source: raw } = loaded;
      const source =
        typeof raw === 'string' ? raw : raw === undefined ? '' : new TextDecoder().decode(raw);
      return MODULE_SYNTAX.test(source)
        ? { ...loaded, format: 'module-typescript', source }
        : loaded;
    },
  });
}

/** a .ts of the user's (not .cts, which is CommonJS by name; not a dependency's) */
function isProjectTs(url: string): boolean {
  return (
    url.startsWith('file:') &&
    /\.ts$/.test(new URL(url).pathname) &&
    !url.includes('/node_modules/')
  );
}
