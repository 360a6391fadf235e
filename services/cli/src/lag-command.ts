// `kubebus lag`: how far behind each consumer is.
import { print, type BusContext, type CommandOutcome } from './command.js';
import { formatLag, readLag } from './lag.js';

export async function lagCommand(context: BusContext): Promise<CommandOutcome> {
  const lags = await readLag(context.nc);
  print(context, lags, () => formatLag(lags));
  return 'ok';
}
