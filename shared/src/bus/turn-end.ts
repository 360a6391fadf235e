// The end of an event-loop turn, in two steps: first what gathers the turn's
// requests (the object reader's batched reads), then the turn's NATS writes
// (ADR 0027). Both run in the check phase that follows the turn's timers and
// I/O callbacks, in two immediates queued together, so the microtasks a
// gathered request runs before it publishes are done before the write: the
// request goes out with the turn's other commands instead of one loop
// iteration later.

type Task = () => void;

let gathers: Task[] = [];
let writes: Task[] = [];
let scheduled = false;

/** Runs `task` at the end of this turn, before its NATS writes. */
export function gatherAtTurnEnd(task: Task): void {
  gathers.push(task);
  schedule();
}

/** Runs `task` at the end of this turn, after what gathers its requests. */
export function writeAtTurnEnd(task: Task): void {
  writes.push(task);
  schedule();
}

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(runGathers);
  setImmediate(runWrites);
}

function runGathers(): void {
  const tasks = gathers;
  gathers = [];
  runAll(tasks);
}

function runWrites(): void {
  scheduled = false;
  const tasks = writes;
  writes = [];
  try {
    runAll(tasks);
  } finally {
    // gathered between the two steps (a later immediate of this check phase):
    // they go with the next turn
    if (gathers.length > 0 || writes.length > 0) schedule();
  }
}

/** Every task runs even when one throws; the first error is thrown after them. */
function runAll(tasks: readonly Task[]): void {
  let failed: { readonly error: unknown } | undefined;
  for (const task of tasks) {
    try {
      task();
    } catch (error) {
      failed ??= { error };
    }
  }
  if (failed !== undefined) throw failed.error;
}
