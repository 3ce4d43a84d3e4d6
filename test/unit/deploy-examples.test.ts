/**
 * The examples for MCP operators (deploy/kubernetes/examples) against the
 * operators' own published CRDs (test/fixtures/crds): each validates under
 * its version's openAPIV3Schema with unknown fields refused, as the API
 * server's strict field validation (kubectl apply --validate=strict) would;
 * a misspelt field or a wrong type fails. CEL rules (x-kubernetes-validations)
 * are the API server's to run and are not evaluated here.
 */
import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv from "ajv";
import addFormats from "ajv-formats";

const ROOT = join(import.meta.dir, "../..");
type Schema = Record<string, any>;

/** The schema with every object that lists its properties closed to others (unless Kubernetes keeps unknown fields there). */
function strict(schema: Schema): Schema {
  if (Array.isArray(schema)) return schema.map(strict);
  if (!schema || typeof schema !== "object") return schema;
  const out: Schema = {};
  for (const [k, v] of Object.entries(schema)) out[k] = strict(v as Schema);
  if (out.properties && out.additionalProperties === undefined && !out["x-kubernetes-preserve-unknown-fields"])
    out.additionalProperties = false;
  return out;
}

function validatorFor(crdFile: string, apiVersion: string) {
  const crd = Bun.YAML.parse(readFileSync(join(ROOT, "test/fixtures/crds", crdFile), "utf8")) as Schema;
  const doc = (Array.isArray(crd) ? crd.find(Boolean) : crd) as Schema;
  const [group, version] = apiVersion.split("/");
  expect(doc.spec.group).toBe(group);
  const served = doc.spec.versions.find((v: Schema) => v.name === version && v.served);
  expect(served).toBeDefined();
  const schema = strict(served.schema.openAPIV3Schema);
  // metadata is the API server's ObjectMeta, not described in the CRD.
  schema.properties.metadata = { type: "object" };
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  // OpenAPI's numeric formats: the type is checked; the width is the API server's.
  for (const format of ["int32", "int64", "double", "float", "byte"]) ajv.addFormat(format, true);
  const validate = ajv.compile(schema);
  return (resource: unknown) =>
    validate(resource) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}`);
}

const examples = [
  { file: "mcp-lifecycle-operator.yaml", crd: "mcp.x-k8s.io_mcpservers.yaml" },
  { file: "toolhive.yaml", crd: "toolhive.stacklok.dev_mcpservers.yaml" },
];

describe("deploy/kubernetes/examples against the operators' CRDs", () => {
  for (const { file, crd } of examples) {
    test(`${file} validates against ${crd}; a misspelt field and a wrong type do not`, () => {
      const resource = Bun.YAML.parse(readFileSync(join(ROOT, "deploy/kubernetes/examples", file), "utf8")) as Schema;
      expect(resource.kind).toBe("MCPServer");
      const errorsOf = validatorFor(crd, resource.apiVersion);
      expect(errorsOf(resource)).toEqual([]);
      const misspelt = structuredClone(resource);
      misspelt.spec.imagee = "x";
      expect(errorsOf(misspelt).join()).toContain("additional properties");
      const wrongType = structuredClone(resource);
      if (wrongType.spec.config) wrongType.spec.config.port = "8787";
      else wrongType.spec.proxyPort = "8080";
      expect(errorsOf(wrongType).join()).toContain("must be integer");
    });
  }
});
