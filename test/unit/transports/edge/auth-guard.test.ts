import { expect, test } from "bun:test";
import type { Authenticator } from "../../../../src/auth/index.ts";
import { authGuard } from "../../../../src/transports/edge/auth-guard.ts";
import { caller, edgeOf } from "./edge-request.ts";

const auth: Authenticator = {
  required: true,
  authenticate: async (header) =>
    header === "Bearer good"
      ? { ok: true, caller }
      : { ok: false, error: "invalid_token", description: 'the token "x" is not one this server accepts' },
};

test("a token that does not authenticate is 401 with the challenge (no quote of the client's in it); one that does names the caller", async () => {
  const refused = await authGuard(
    auth,
    (extra = "") => `Bearer realm="t"${extra}`,
  )(edgeOf({ headers: { authorization: "Bearer bad" } }));
  expect(refused?.status).toBe(401);
  const challenge = refused!.headers.get("www-authenticate")!;
  expect(challenge).toContain('error="invalid_token"');
  expect(challenge).not.toContain('"x"');
  const edge = edgeOf({ headers: { authorization: "Bearer good" } });
  expect(await authGuard(auth, () => "")(edge)).toBeUndefined();
  expect(edge.caller?.id).toBe("label:ci");
});
