// Every command of the kubebus binary, in the order the usage lists them.
// A command exists when it is here: dispatch.ts runs it, usage.ts lists it.
import { BUS_COMMANDS } from './bus-commands.js';
import type { CommandSpec } from './command-spec.js';
import { GENERATE_COMMAND } from './generate-command.js';
import { OPERATOR_COMMANDS } from './operator-commands.js';
import { TEST_COMMAND } from './test-command.js';
import { VERSION_COMMAND } from './version-command.js';

export const COMMANDS: readonly CommandSpec[] = [
  ...OPERATOR_COMMANDS,
  TEST_COMMAND,
  GENERATE_COMMAND,
  ...BUS_COMMANDS,
  VERSION_COMMAND,
];
