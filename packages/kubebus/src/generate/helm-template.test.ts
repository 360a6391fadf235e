import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { block, helmTemplate, splice, value, when } from './helm-template.js';
import { yamlDocuments } from './yaml-documents.js';

describe('helmTemplate', () => {
  it('turns markers into template actions, whole scalars unquoted', () => {
    const yaml = yamlDocuments([
      {
        replicas: value('.Values.replicas'),
        args: ['run', value('.Values.n | quote')],
        image: `${value('.Values.image.repository')}:${value('.Values.image.tag')}`,
      },
    ]);
    assert.equal(
      helmTemplate(yaml),
      '---\nreplicas: {{ .Values.replicas }}\nargs:\n  - run\n  - {{ .Values.n | quote }}\nimage: {{ .Values.image.repository }}:{{ .Values.image.tag }}\n',
    );
  });

  it('places a block under its key with toYaml and the right indentation', () => {
    const yaml = yamlDocuments([{ containers: [{ name: 'a', resources: block('.Values.r') }] }]);
    assert.equal(
      helmTemplate(yaml),
      '---\ncontainers:\n  - name: a\n    resources:\n      {{- toYaml .Values.r | nindent 6 }}\n',
    );
  });

  it('splices a list of the values into a list, where its marker item is', () => {
    const yaml = yamlDocuments([{ env: [{ name: 'A', value: '1' }, splice('.Values.env')] }]);
    assert.equal(
      helmTemplate(yaml),
      '---\nenv:\n  - name: A\n    value: "1"\n  {{- with .Values.env }}{{- toYaml . | nindent 2 }}{{- end }}\n',
    );
  });

  it("escapes braces that are the YAML's own (Prometheus annotations)", () => {
    const text = helmTemplate(yamlDocuments([{ description: '{{ $labels.pod }} is slow' }]));
    assert.equal(text, '---\ndescription: "{{ "{{" }} $labels.pod {{ "}}" }} is slow"\n');
  });

  it('wraps a file in a condition', () => {
    assert.equal(when('.Values.x', 'a: 1\n'), '{{- if .Values.x }}\na: 1\n{{- end }}\n');
  });
});
