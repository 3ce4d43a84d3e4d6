// oidc-provider ships no types; the tests use its constructor and Koa callback only.
declare module "oidc-provider" {
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    callback(): (req: import("node:http").IncomingMessage, res: import("node:http").ServerResponse) => void;
  }
}
