/** The stdio transport's reading of cut messages. */
import { describe, expect, test } from "bun:test";
import { topLevelId } from "../../../src/transports/stdio.ts";

describe("stdio transport", () => {
  test("finds the top-level id of a cut message, not a nested one", () => {
    expect(topLevelId('{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"')).toBe(7);
    expect(topLevelId('{"jsonrpc":"2.0","params":{"id":99,"a":"b"},"id":"abc","method":"x","pad":"')).toBe("abc");
    expect(topLevelId('{"method":"notifications/cancelled","params":{"reason":"')).toBeUndefined();
    expect(topLevelId('{"x":"has \\"id\\": 5 inside","id":3')).toBe(3);
  });
});
