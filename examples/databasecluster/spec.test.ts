import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DatabaseClusterSpecSchema, cronProblem, describeIssues } from './spec.js';

const valid = { engine: 'postgres', version: '16', storage: { size: '10Gi' } };

describe('DatabaseCluster spec', () => {
  it('defaults replicas to 3 and backup retention to 7 days', () => {
    const spec = DatabaseClusterSpecSchema.parse({ ...valid, backup: { schedule: '0 3 * * *' } });
    assert.equal(spec.replicas, 3);
    assert.equal(spec.backup?.retentionDays, 7);
  });

  it('explains every invalid field in one readable message', () => {
    const cases: [unknown, RegExp][] = [
      [{ ...valid, replicas: 0 }, /spec\.replicas: .*>=1/],
      [{ ...valid, replicas: 10 }, /spec\.replicas: .*<=9/],
      [{ ...valid, engine: 'oracle' }, /spec\.engine: /],
      [{ ...valid, storage: { size: 'ten gigs' } }, /spec\.storage\.size: a Kubernetes quantity/],
      [{ ...valid, engine: 'mysql', version: '16' }, /spec\.version: mysql 16 is not supported/],
      [
        { ...valid, backup: { schedule: '99 * * * *' } },
        /spec\.backup\.schedule: cron: .*minute.*99/,
      ],
    ];
    for (const [spec, message] of cases) {
      const parsed = DatabaseClusterSpecSchema.safeParse(spec);
      assert.ok(!parsed.success, JSON.stringify(spec));
      assert.match(describeIssues(parsed.error), message);
    }
  });

  it('accepts the schedules Kubernetes CronJob accepts', () => {
    for (const schedule of [
      '*/15 2-4 * * 1,3',
      '@daily',
      '@midnight',
      '@every 1h30m',
      '0 3 * * MON',
      '0 3 * * mon-fri',
      '0 0 1 JAN,JUL *',
      '0 0 ? * *',
      '5 4 * * 7',
    ])
      assert.equal(cronProblem(schedule), undefined, schedule);
  });

  it('refuses what Kubernetes CronJob refuses, saying why', () => {
    assert.match(cronProblem('* * *') ?? '', /5 cron fields, got 3/);
    assert.match(cronProblem('0 0 0 * * *') ?? '', /5 cron fields, got 6/);
    assert.match(cronProblem('0 24 * * *') ?? '', /hour.*24/);
    assert.match(cronProblem('0 0 L * *') ?? '', /"L" is not supported/);
    assert.match(cronProblem('0 0 * * 5#2') ?? '', /"#" is not supported/);
    assert.match(cronProblem('@fortnightly') ?? '', /unknown descriptor/);
    assert.match(cronProblem('TZ=UTC 0 3 * * *') ?? '', /time zone/);
  });
});
