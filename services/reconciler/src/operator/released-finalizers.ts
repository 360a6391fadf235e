// Read-your-own-writes for the finalizer's release: the uids whose finalizer
// this process removed. The release is the runtime's last write of an object
// being deleted, and usually its end (the apiserver deletes it then), so it
// is not waited for on the bus as other own writes are (ADR 0019): a record
// of the deletion carries another revision, and each read after a release
// would wait out the bound before asking the apiserver. But a bus behind the
// apiserver (a watcher lagging or restarting) still shows the object with the
// finalizer, and a reconcile of that record would finalize it again. A
// released uid is never finalized again: the finalizer is gone for good.
export class ReleasedFinalizers {
  readonly #uids = new Set<string>();

  constructor(private readonly capacity = 50_000) {}

  released(uid: string): void {
    this.#uids.delete(uid); // re-insert: the set's order is the LRU order
    this.#uids.add(uid);
    if (this.#uids.size > this.capacity) {
      const oldest = this.#uids.values().next();
      if (oldest.done !== true) this.#uids.delete(oldest.value);
    }
  }

  has(uid: string): boolean {
    return this.#uids.has(uid);
  }
}
