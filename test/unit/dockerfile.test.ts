import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";

test("every base image in the Dockerfile is named with its registry (podman refuses short names)", () => {
  const dockerfile = readFileSync(join(import.meta.dir, "../../Dockerfile"), "utf8");
  const images = [...dockerfile.matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]!);
  expect(images.length).toBeGreaterThan(0);
  // The first path segment of a fully qualified name is a registry host: it has a dot or a port, or is localhost.
  for (const image of images) expect(image).toMatch(/^([a-z0-9-]+\.[a-z0-9.-]+|localhost)(:\d+)?\//);
});
