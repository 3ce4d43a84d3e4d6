import { expect, test } from "bun:test";
import { firstAnswer, type Guard } from "../../../../src/transports/edge/guard.ts";
import { edgeOf } from "./edge-request.ts";

test("the first guard that answers ends the request; the later ones never run", async () => {
  const ran: string[] = [];
  const pass: Guard = () => void ran.push("pass");
  const stop: Guard = () => (ran.push("stop"), new Response("no", { status: 418 }));
  const never: Guard = () => void ran.push("never");
  expect((await firstAnswer([pass, stop, never], edgeOf()))?.status).toBe(418);
  expect(ran).toEqual(["pass", "stop"]);
  expect(await firstAnswer([pass], edgeOf())).toBeUndefined();
});
