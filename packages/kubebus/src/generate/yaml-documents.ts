// Objects as a multi-document YAML file, with a comment heading it.
import { stringify } from 'yaml';

export function yamlDocuments(objects: readonly object[], header?: string): string {
  const comment =
    header === undefined
      ? ''
      : header
          .split('\n')
          .map((line) => (line === '' ? '#' : `# ${line}`))
          .join('\n') + '\n';
  return comment + objects.map((object) => `---\n${stringify(object, { lineWidth: 0 })}`).join('');
}
