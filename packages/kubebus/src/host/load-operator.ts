// Loads an operator module (.ts through tsx, .js/.mjs as is) and finds its
// operator: the default export, or the only exported operator.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { isOperator, type Operator } from '../api/operator.js';

export class OperatorLoadError extends Error {
  override readonly name = 'OperatorLoadError';
}

export async function loadOperator(file: string): Promise<Operator> {
  const path = resolve(file);
  if (!existsSync(path))
    throw new OperatorLoadError(`${file} does not exist: give the path of your operator module`);
  const url = pathToFileURL(path).href;
  let module: Record<string, unknown>;
  try {
    module = (
      /\.[mc]?ts$/.test(path)
        ? await (await import('tsx/esm/api')).tsImport(url, import.meta.url)
        : await import(url)
    ) as Record<string, unknown>;
  } catch (error) {
    const reason = (error as Error).message.split('\n')[0] ?? String(error);
    throw new OperatorLoadError(`cannot load ${file}: ${reason}`);
  }
  const candidates = [module['default'], ...Object.values(module)].filter(isOperator);
  const operators = [...new Set(candidates)];
  const [operator] = operators;
  if (operator === undefined)
    throw new OperatorLoadError(
      `${file} exports no operator: export default defineOperator({ ... })`,
    );
  if (operators.length > 1 && !isOperator(module['default']))
    throw new OperatorLoadError(
      `${file} exports ${operators.length} operators: export the one to run as default`,
    );
  return isOperator(module['default']) ? module['default'] : operator;
}
