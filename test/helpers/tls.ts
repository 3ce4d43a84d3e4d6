/** A self-signed certificate for `localhost` (and only that name), made by openssl into `dir`: key.pem and cert.pem. */
import { expect } from "bun:test";
import { join } from "node:path";

export function selfSignedCert(dir: string): { key: string; cert: string } {
  const key = join(dir, "key.pem");
  const cert = join(dir, "cert.pem");
  const made = Bun.spawnSync(
    ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert].concat([
      "-days",
      "1",
      "-subj",
      "/CN=localhost",
      "-addext",
      "subjectAltName=DNS:localhost",
    ]),
    { stderr: "pipe" },
  );
  expect(made.exitCode, made.stderr.toString()).toBe(0);
  return { key, cert };
}
