/**
 * A caller's id, the key every piece of per-caller state is kept under (jobs,
 * tasks, limits, confirmation seals, the audit line): the kind of credential
 * and its name, so that no two kinds can meet. A static token labelled `ci`
 * is `label:ci`, a JWT whose sub is `ci` is `sub:ci`, one that names only its
 * client `client_id:ci`; without a token a caller is `anonymous` (remote mode
 * on loopback) or `local` (stdio), words no credential can give. The kinds are
 * the policy's own words for who (label:, sub:). One issuer is trusted at a
 * time (STORE_OAUTH_ISSUER), so its subjects need no issuer beside them.
 */
export type CallerKind = "label" | "sub" | "client_id";

export const callerId = (kind: CallerKind, name: string): string => `${kind}:${name}`;
