// `kubebus generate <operator> --only <parts> --namespace <namespace>`, as a
// user runs it: the manifests they would apply, parsed.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { kubebusArgs } from './services.js';

export async function generatedManifests<T extends object = Record<string, unknown>>(
  operatorPath: string,
  parts: string,
  namespace: string,
): Promise<T[]> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    kubebusArgs('generate', operatorPath, '--only', parts, '--namespace', namespace),
    { maxBuffer: 8 << 20 },
  );
  return parseAllDocuments(stdout)
    .map((document) => document.toJSON() as T | null)
    .filter((manifest): manifest is T => manifest !== null);
}
