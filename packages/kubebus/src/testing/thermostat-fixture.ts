// A resource in two versions for the unit tests of conversion: v1alpha1 says
// a temperature in Celsius; v1 (stored) says a value and its unit. v1 objects
// in Fahrenheit keep their unit in an annotation when shown as v1alpha1, so
// a round trip loses nothing (controller-runtime's practice), deleted when
// restored or when there is nothing to keep, so a stale one never restores a
// unit nobody wrote.
import { z } from 'zod';
import { defineResource } from '@kubebus/shared/definition';

const UNIT = 'thermostats.test.kubebus.dev/unit';

const v1alpha1 = {
  spec: z.object({ celsius: z.int().min(-58).max(122) }),
  status: z.object({ reading: z.int() }),
};
const v1 = {
  spec: z.object({
    target: z.object({ value: z.int().min(-58).max(122), unit: z.enum(['C', 'F']).default('C') }),
  }),
  status: z.object({ current: z.int() }),
};

const toCelsius = (f: number) => Math.round(((f - 32) * 5) / 9);

export const Thermostat = defineResource({
  group: 'test.kubebus.dev',
  kind: 'Thermostat',
  scope: 'Namespaced',
  versions: { v1alpha1, v1 },
  storage: 'v1',
  convert: {
    v1alpha1: {
      toStorage: ({ metadata, spec, status }) => {
        const stored = metadata.annotations?.[UNIT];
        const fahrenheit = stored?.startsWith('F:') === true ? Number(stored.slice(2)) : undefined;
        const keep = fahrenheit !== undefined && toCelsius(fahrenheit) === spec.celsius;
        return {
          // restored (or stale): it goes, so it never restores a unit later
          annotations: { [UNIT]: null },
          spec: {
            target: keep
              ? { value: fahrenheit, unit: 'F' as const }
              : { value: spec.celsius, unit: 'C' as const },
          },
          ...(status.reading === undefined ? {} : { status: { current: status.reading } }),
        };
      },
      fromStorage: ({ spec, status }) => {
        // a server-side apply's partial object may lack any field
        const { value, unit } = spec.target ?? {};
        return {
          spec: { celsius: value === undefined || unit !== 'F' ? value : toCelsius(value) },
          // nothing to keep in Celsius: a stale one (carried on the stored object) goes too
          annotations: { [UNIT]: unit === 'F' && value !== undefined ? `F:${value}` : null },
          ...(status.current === undefined ? {} : { status: { reading: status.current } }),
        };
      },
    },
  },
});
