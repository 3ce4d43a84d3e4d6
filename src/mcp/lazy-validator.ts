/**
 * The JSON Schema validator the MCP SDK asks for (elicitation answers, tool
 * results), built on first use: the SDK builds an Ajv instance for every
 * server it creates, and at start-up that is time of every spawn →
 * tools/list that answers nothing it needs (BENCH_ONLY=start). One per process serves every
 * server (remote mode builds a server per request).
 */
import type { JsonSchemaType, JsonSchemaValidator, jsonSchemaValidator } from "@modelcontextprotocol/server";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/server/validators/ajv";

export class LazyJsonSchemaValidator implements jsonSchemaValidator {
  #ajv: AjvJsonSchemaValidator | undefined;

  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    this.#ajv ??= new AjvJsonSchemaValidator();
    return this.#ajv.getValidator<T>(schema);
  }
}
