// Deleting many rows in short statements: the expiry sweeps and the bounds on live credentials.

/** Rows per DELETE: a large backlog is removed in short statements, each far within DB_TIMEOUT_MS. */
export const DELETE_BATCH = 5000;

/**
 * Deletes what `selectKeys` finds, at most `batch` keys per statement, until it finds no more; returns
 * how many rows `deleteKeys` reported. The keys are read first and deleted by value: MySQL allows neither
 * LIMIT in an IN subquery nor reading the table a DELETE deletes from. `selectKeys` must stop finding
 * the rows `deleteKeys` removed (it reads through an index, in bounded steps).
 */
export async function deleteInBatches<K>(
  selectKeys: (limit: number) => Promise<K[]>,
  deleteKeys: (keys: K[]) => Promise<number>,
  batch: number = DELETE_BATCH,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const keys = await selectKeys(batch);
    if (keys.length === 0) return deleted;
    deleted += await deleteKeys(keys);
    if (keys.length < batch) return deleted;
  }
}
