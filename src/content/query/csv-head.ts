/**
 * The worker's side of a CSV read while it downloads (csv-stream.ts): the
 * dialect and columns the engine sniffs from the object's head, as read_csv
 * options for the FIFO. Where those may differ from what the engine would
 * sniff over the whole file, the query is answered STREAM_UNUSABLE and runs
 * over the whole file instead. A type too narrow for a later row fails that
 * row (and so the streamed run); the one silent difference is a column with
 * no value in the head, which the sniffer calls VARCHAR where the whole
 * file's sample may find numbers, so such a head is not streamed.
 */
import { ActionableError } from "../../runtime/errors.ts";
import type { Connection } from "./engine-types.ts";
import { sqlText, type TableFile } from "./tables.ts";

/** The worker's answer when the streamed table cannot serve the query: the server runs it over the whole file. */
export const STREAM_UNUSABLE = "CsvStreamUnusable";

export const streamUnusable = (why: string) =>
  new ActionableError({
    resource: "objects",
    code: STREAM_UNUSABLE,
    message: `The object is read whole instead of while it downloads: ${why}.`,
    hint: "nothing to do: the server runs the query again over the whole object.",
  });

/** read_csv's options for `file` (a streamed CSV), as the engine's sniffer finds them in its head. */
export async function headOptions(conn: Connection, file: TableFile & { head: string }): Promise<string> {
  const head = sqlText(file.head);
  const sniffed = await conn
    .runAndReadAll(`SELECT Prompt FROM sniff_csv(${head})`)
    .then((r) => String(r.getRowObjects()[0]?.Prompt ?? ""))
    .catch((err) => {
      throw streamUnusable(`its head could not be sniffed (${(err as Error).message.split("\n")[0]})`);
    });
  // "FROM read_csv('<head>', auto_detect=false, delim=',', …, columns={…});"
  const prefix = `FROM read_csv(${head}, `;
  if (!sniffed.startsWith(prefix) || !sniffed.endsWith(");")) throw streamUnusable("the sniffer's answer was not read");
  const options = sniffed.slice(prefix.length, -2);
  const counts = (await conn.runAndReadAll(`SELECT count(COLUMNS(*)) FROM read_csv(${head}, ${options})`)).getRows()[0];
  if (!counts || counts.some((n) => Number(n) === 0)) throw streamUnusable("a column has no value in its first lines");
  return options;
}
