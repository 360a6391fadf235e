// kubebus test <operator>: perturbationTest with progress on stderr, the
// report on stdout (-o json for CI), exit 1 on a failing schedule.
import { readFileSync } from 'node:fs';
import { durationMs } from '@kubebus/shared/config';
import { parseAllDocuments } from 'yaml';
import { machine } from '@kubebus/cli/commands';
import { outputFormatOf } from './bus-options.js';
import { ExitCodes, type Exit, type Host } from './command-spec.js';
import { operatorArgument, stringOption, usageError, type CommandLine } from './commands.js';
import { SCHEDULE_KINDS, type ScheduleKind } from '../perturb/schedule.js';
import type { Layout } from '../perturb/report.js';

const USAGE =
  'kubebus test <operator.ts|.js> [--budget n] [--layout three|one] [--perturb kinds] [--reach-within 60s] [--replay <schedule>] [--samples file.yaml] [--seed n] [-o json]';

/** --layout: the roles apart (three, as the generated Deployments) or together (one, as kubebus run). */
function layoutOf(line: CommandLine): Layout | undefined {
  const text = stringOption(line, 'layout');
  if (text === undefined || text === 'three' || text === 'one') return text;
  return usageError(`--layout "${text}": three (each role apart) or one (as kubebus run)`);
}

function counted(line: CommandLine, name: string, least: number): number | undefined {
  const text = stringOption(line, name);
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isInteger(value) || value < least)
    return usageError(`--${name} "${text}" must be a whole number of at least ${least}`);
  return value;
}

function duration(line: CommandLine, name: string): number | undefined {
  const text = stringOption(line, name);
  if (text === undefined) return undefined;
  const parsed = durationMs('0s').safeParse(text);
  if (!parsed.success || parsed.data <= 0)
    return usageError(`--${name} "${text}" must be a duration such as 60s or 2m`);
  return parsed.data;
}

/** --perturb: the kinds of schedule to try, comma-separated. */
function kindsOf(line: CommandLine): ScheduleKind[] | undefined {
  const text = stringOption(line, 'perturb');
  if (text === undefined) return undefined;
  const kinds = text.split(',').map((kind) => kind.trim());
  const unknown = kinds.find((kind) => !(SCHEDULE_KINDS as readonly string[]).includes(kind));
  if (unknown !== undefined || kinds.length === 0)
    return usageError(`--perturb "${text}": the kinds are ${SCHEDULE_KINDS.join(', ')}`);
  return kinds as ScheduleKind[];
}

/** The documents of a YAML file, each an object. */
function samplesOf(file: string): object[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return usageError(`--samples ${file} cannot be read: give a YAML file of objects`);
  }
  const documents = parseAllDocuments(text);
  const samples: object[] = [];
  for (const [index, document] of (Array.isArray(documents) ? documents : [documents]).entries()) {
    if (document.errors.length > 0)
      usageError(
        `--samples ${file}: document ${index + 1} is not YAML (${document.errors[0]?.message.split('\n')[0] ?? ''})`,
      );
    const value: unknown = document.toJS();
    if (value === null || value === undefined) continue;
    if (typeof value !== 'object' || Array.isArray(value))
      usageError(`--samples ${file}: document ${index + 1} is not an object`);
    samples.push(value);
  }
  return samples;
}

export async function testCommand(line: CommandLine, host: Host): Promise<Exit> {
  const format = outputFormatOf(line);
  const budget = counted(line, 'budget', 1);
  const seed = counted(line, 'seed', 0);
  const reachWithinMs = duration(line, 'reach-within');
  const replay = stringOption(line, 'replay');
  const kinds = kindsOf(line);
  const layout = layoutOf(line);
  const samplesFile = stringOption(line, 'samples');
  const samples = samplesFile === undefined ? undefined : samplesOf(samplesFile);
  const file = line.positionals[0] ?? usageError(`missing the operator module; usage: ${USAGE}`);
  const operator = await operatorArgument(line, USAGE);
  const { perturbationTest, PerturbationSetupError } =
    await import('../perturb/perturbation-test.js');
  const { WorkloadError } = await import('../perturb/workload.js');
  const { formatReport } = await import('../perturb/format-report.js');
  const again = [
    `kubebus test ${file}`,
    ...(samplesFile === undefined ? [] : [`--samples ${samplesFile}`]),
    ...(seed === undefined ? [] : [`--seed ${seed}`]),
    ...(reachWithinMs === undefined ? [] : [`--reach-within ${reachWithinMs}ms`]),
    ...(layout === undefined ? [] : [`--layout ${layout}`]),
  ].join(' ');
  let report;
  try {
    report = await perturbationTest(operator, {
      ...(budget === undefined ? {} : { budget }),
      ...(seed === undefined ? {} : { seed }),
      ...(reachWithinMs === undefined ? {} : { reachWithinMs }),
      ...(replay === undefined ? {} : { replay }),
      ...(kinds === undefined ? {} : { kinds }),
      ...(layout === undefined ? {} : { layout }),
      ...(samples === undefined ? {} : { samples }),
      progress: (text) => host.stderr.write(`${text}\n`),
      replayLine: (schedule) => `${again} --replay ${schedule}`,
    });
  } catch (error) {
    if (error instanceof PerturbationSetupError || error instanceof WorkloadError)
      return usageError(error.message);
    throw error;
  }
  host.stdout.write(format === 'table' ? formatReport(report) : machine(format, report));
  return report.passed ? ExitCodes.ok : ExitCodes.problem;
}
