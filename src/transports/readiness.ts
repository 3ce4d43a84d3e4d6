/**
 * Readiness, beside liveness (/healthz: "the process serves"): /readyz says
 * whether this replica should get traffic now. It is ready while the store
 * answers (one plain request to its endpoint, any HTTP answer counting, kept
 * STORE_CHECK_CACHE_MS so probes cost the store nothing much) and, where a
 * state store is configured, while Redis answers; from SIGTERM on it is not,
 * before the drain (http.ts keeps accepting for STORE_SHUTDOWN_UNREADY_MS so
 * a load balancer sees that). It discloses no address, name or error: only
 * which check failed.
 */

/** How long one answer of the store's counts. */
const CACHE_MS = 5_000;
/** The store must answer within this. */
const ANSWER_MS = 2_000;

export interface Readiness {
  ready: boolean;
  store: "answering" | "unreachable";
  state_store?: "connected" | "unreachable";
}

export interface ReadinessSources {
  /** The default store's endpoint (AWS: the region's S3 endpoint). */
  storeUrl: string;
  /** The shared state store's state, where one is configured. */
  stateStore?: () => "connected" | "unreachable";
}

export function readinessProbe(sources: ReadinessSources, now: () => number = performance.now) {
  let checked: { at: number; answering: boolean } | undefined;
  let pending: Promise<boolean> | undefined;
  const storeAnswers = async (): Promise<boolean> => {
    if (checked && now() - checked.at < CACHE_MS) return checked.answering;
    // One check at a time, whatever the number of probes waiting.
    pending ??= fetch(sources.storeUrl, { method: "HEAD", redirect: "manual", signal: AbortSignal.timeout(ANSWER_MS) })
      .then(
        (res) => (void res.body?.cancel().catch(() => {}), true),
        () => false,
      )
      .then((answering) => {
        checked = { at: now(), answering };
        pending = undefined;
        return answering;
      });
    return pending;
  };
  return async (): Promise<Readiness> => {
    const store = (await storeAnswers()) ? "answering" : "unreachable";
    const stateStore = sources.stateStore?.();
    return {
      ready: store === "answering" && stateStore !== "unreachable",
      store,
      ...(stateStore ? { state_store: stateStore } : {}),
    };
  };
}

/** The endpoint a store is reached at: its configured URL, or AWS's regional S3 endpoint. */
export const storeUrlOf = (endpointUrl: string | undefined, region: string): string =>
  endpointUrl ?? `https://s3.${region}.amazonaws.com`;
