/**
 * Runs once before every test file: starts a throwaway Ceph RGW (the real S3
 * implementation every storage behaviour is checked against) and stops it at
 * the end. If it cannot start, every test that needs it fails, saying how to
 * provision it; nothing is skipped.
 */
import { afterAll } from "bun:test";
import { startCephRgw, type S3Server } from "../../scripts/s3/local-servers.ts";
import { removeTempDirs } from "../helpers/files.ts";
import { setS3Server } from "../helpers/s3.ts";

let server: S3Server | undefined;
try {
  server = await startCephRgw();
  setS3Server(server);
} catch (err) {
  setS3Server(undefined, (err as Error).message);
}

afterAll(async () => {
  await server?.stop();
  removeTempDirs();
});
