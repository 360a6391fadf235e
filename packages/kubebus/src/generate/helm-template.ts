// Helm templates from generated objects: the object builders take marker
// strings where a value comes from values.yaml, and helmTemplate() turns the
// serialised YAML into template text. Braces already in the YAML (Prometheus
// annotations, CEL messages) are escaped first, so Helm prints them as they
// are.

/** A scalar from the chart's values, e.g. value('.Values.image.tag'). */
export const value = (expression: string): string => `«${expression}»`;

/** A map or list from the chart's values, placed with toYaml under its key. */
export const block = (expression: string): string => `«block:${expression}»`;

/** A list from the chart's values, its items placed where this item is (none: nothing). */
export const splice = (expression: string): string => `«splice:${expression}»`;

const BRACES = /\{\{|\}\}/g;
const SPLICE_LINE = /^(\s*)- (['"]?)«splice:([^«»]*)»\2$/gm;
const BLOCK_LINE = /^(\s*)(- )?([^\s:]+): (['"]?)«block:([^«»]*)»\4$/gm;
const WHOLE_SCALAR = /(: |- )(['"]?)«([^«»]*)»\2$/gm;
const INLINE = /«([^«»]*)»/g;

export function helmTemplate(yaml: string): string {
  return yaml
    .replace(BRACES, (braces) => (braces === '{{' ? '{{ "{{" }}' : '{{ "}}" }}'))
    .replace(
      SPLICE_LINE,
      (_line, indent: string, _q, expression: string) =>
        `${indent}{{- with ${expression} }}{{- toYaml . | nindent ${String(indent.length)} }}{{- end }}`,
    )
    .replace(
      BLOCK_LINE,
      (_line, indent: string, dash: string | undefined, key: string, _q, expression: string) => {
        const column = indent.length + (dash === undefined ? 0 : 2) + 2;
        return `${indent}${dash ?? ''}${key}:\n${' '.repeat(column)}{{- toYaml ${expression} | nindent ${column} }}`;
      },
    )
    .replace(
      WHOLE_SCALAR,
      (_match, lead: string, _q, expression: string) => `${lead}{{ ${expression} }}`,
    )
    .replace(INLINE, (_match, expression: string) => `{{ ${expression} }}`);
}

/** A template file shown only when `condition` holds. */
export function when(condition: string, template: string): string {
  return `{{- if ${condition} }}\n${template.trimEnd()}\n{{- end }}\n`;
}
