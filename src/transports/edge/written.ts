/**
 * One request's bookkeeping from its arrival to its answer written: it is
 * in flight until then (the shutdown waits for it), its caller's slot and
 * its memory reservations are held until then, and it gets one access-log
 * line then, with how it ended (written, the client gone, cut). A streamed
 * answer is wrapped so that a slow reader cannot hold it forever and a
 * stream still open when the grace is over ends with "shutting down".
 */
import type { Logger } from "../../runtime/log.ts";
import type { SendLeases } from "../../runtime/memory.ts";
import { logValue } from "../../runtime/redact.ts";
import { answerBody, type GraceWaiters, sseMessage } from "../http-answer.ts";
import type { RpcMessage } from "../http-eras.ts";
import type { Answered } from "./dispatch.ts";

export interface InFlight {
  count: number;
  /** Called when the count falls to 0. */
  drained?: () => void;
}

export class RequestRecord {
  readonly #started = performance.now();
  #rpc = "";
  #caller = "-";
  #leases: SendLeases | undefined;
  #closeServer: (() => void) | undefined;
  #rpcId: RpcMessage["id"] = null;
  #release: (() => void) | undefined;

  constructor(
    readonly req: Request,
    readonly path: () => string,
    private readonly inFlight: InFlight,
    private readonly log: Logger,
  ) {
    inFlight.count++;
  }

  note = (what: string, caller?: string) => {
    this.#rpc = what;
    this.#caller = caller ?? this.#caller;
  };
  hold = (release: () => void) => void (this.#release = release);
  answered: Answered = (leases, close, id) => {
    this.#leases = leases;
    this.#closeServer = close;
    this.#rpcId = id ?? null;
  };

  /** `res` as sent: ended at once when it has no stream to write (or `fixed`), else when its stream ends. */
  send(res: Response, fixed: boolean, grace: GraceWaiters, shuttingDown: string): Response {
    let ended = false;
    const end = (how: string) => {
      if (ended) return;
      ended = true;
      this.#done(res.status, how);
    };
    if (fixed || !res.body) {
      end("written");
      return res;
    }
    this.req.signal.addEventListener("abort", () => end("gone"), { once: true });
    const sse = !!res.headers.get("content-type")?.includes("text/event-stream");
    const waiting = sse ? grace.wait() : undefined;
    const interrupt = waiting?.ended.then(() =>
      sseMessage({ jsonrpc: "2.0", id: this.#rpcId, error: { code: -32000, message: shuttingDown } }),
    );
    const onEnd = (how: string) => (waiting?.forget(), end(how));
    return new Response(answerBody(res.body, { onEnd, ...(interrupt ? { interrupt } : {}) }), {
      status: res.status,
      headers: res.headers,
    });
  }

  #done(status: number, how: string): void {
    this.inFlight.count--;
    if (this.inFlight.count === 0) this.inFlight.drained?.();
    this.#release?.();
    this.#leases?.settleAll();
    this.#closeServer?.();
    const cut = how === "written" ? "" : ` (${how})`;
    this.log.info(
      `http ${this.req.method} ${this.path()}${this.#rpc ? ` ${logValue(this.#rpc)}` : ""} ${status}${cut} ${Math.round(performance.now() - this.#started)}ms caller=${logValue(this.#caller)}`,
    );
  }
}
