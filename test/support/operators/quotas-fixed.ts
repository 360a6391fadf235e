// quotas.ts's fix: a cpu it cannot read is the default, 1000m, not a throw.
import { millicores, quotasReading } from './quotas.js';

export default quotasReading((cpu) => {
  try {
    return millicores(cpu);
  } catch {
    return 1000;
  }
});
