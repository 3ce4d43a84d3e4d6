/** How a test's user answers a confirmation form (mcp/confirmations.ts), as an elicitation result of either SDK. */
export type Answer = "accept" | "unticked" | "decline" | "cancel";

export const ANSWERS = {
  accept: { action: "accept", content: { confirm: true } },
  unticked: { action: "accept", content: { confirm: false } },
  decline: { action: "decline" },
  cancel: { action: "cancel" },
} as const satisfies Record<Answer, { action: "accept" | "decline" | "cancel"; content?: { confirm: boolean } }>;
