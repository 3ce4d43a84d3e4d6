/**
 * The guards in front of MCP at /mcp, in order: the first to answer (a
 * refusal, a preflight, a client's answer) ends the request (guard.ts).
 */
import type { Scope } from "../../config/oauth-config.ts";
import { browserChecks } from "../http-browser-checks.ts";
import type { HttpDeps } from "../http-types.ts";
import type { LegacyQuestions } from "../legacy-questions.ts";
import type { Limiter } from "../shared-limits.ts";
import { answerGuard } from "./answer-guard.ts";
import { authGuard } from "./auth-guard.ts";
import { bodyGuard } from "./body-guard.ts";
import { browserGuard } from "./browser-guard.ts";
import { callGuard } from "./call-guard.ts";
import type { Guard } from "./guard.ts";
import { limitGuard } from "./limit-guard.ts";
import { postGuard } from "./post-guard.ts";
import { METADATA_PATH } from "./side-routes.ts";

export function edgeGuards(
  deps: HttpDeps,
  at: { limits: Limiter; questions: LegacyQuestions; resource: URL; maxBodyBytes: number },
): Guard[] {
  const { config } = deps;
  const { resource } = at;
  // A refused token's challenge names where the OAuth metadata is (RFC 9728), or the realm of static tokens.
  const metadataUrl = `${resource.origin}${METADATA_PATH}${resource.pathname === "/" ? "" : resource.pathname}`;
  const challenge = (extra = "") =>
    `Bearer ${config.oauth ? `resource_metadata="${metadataUrl}"` : 'realm="store-mcp-server"'}${extra}`;
  const scopeName = (s: Scope) => config.oauth?.scopeNames[s] ?? `s3:${s}`;
  return [
    browserGuard(browserChecks(config)),
    authGuard(deps.auth, challenge),
    limitGuard(at.limits),
    postGuard,
    bodyGuard(at.maxBodyBytes),
    answerGuard(at.questions),
    callGuard(deps, { scopeName, header: challenge }),
  ];
}
