/** The ListObjectsV2 reader (storage/list-xml.ts): what it reads, and every answer it hands back to the SDK's parser. */
import { describe, expect, test } from "bun:test";
import { parseListObjectsV2, xmlText } from "../../../../src/storage/requests/list-xml.ts";

const entry = (key: string, extra = "") =>
  `<Contents><Key>${key}</Key><LastModified>2026-11-24T10:00:00.123Z</LastModified><ETag>&quot;0cc175b9c0f1b6a831c399e269772661&quot;</ETag><Size>12</Size><StorageClass>STANDARD</StorageClass><Owner><ID>o</ID><DisplayName>Owner &amp; co</DisplayName></Owner>${extra}</Contents>`;
const page = (body: string, head = "<IsTruncated>false</IsTruncated>") =>
  `<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix></Prefix><MaxKeys>1000</MaxKeys>${head}${body}</ListBucketResult>`;

describe("parseListObjectsV2", () => {
  test("reads keys, sizes, times, ETags, classes, common prefixes and the continuation", () => {
    const xml = page(
      `${entry("a.txt")}${entry("b &amp; &lt;c&gt; &quot;d&quot; &apos;e&apos; &#233;&#x1F600;")}<CommonPrefixes><Prefix>docs/</Prefix></CommonPrefixes>`,
      "<KeyCount>3</KeyCount><IsTruncated>true</IsTruncated><NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>",
    );
    expect(parseListObjectsV2(xml)).toEqual({
      contents: [
        {
          key: "a.txt",
          size: 12,
          lastModified: "2026-11-24T10:00:00.123Z",
          etag: '"0cc175b9c0f1b6a831c399e269772661"',
          storageClass: "STANDARD",
        },
        {
          key: `b & <c> "d" 'e' é😀`,
          size: 12,
          lastModified: "2026-11-24T10:00:00.123Z",
          etag: '"0cc175b9c0f1b6a831c399e269772661"',
          storageClass: "STANDARD",
        },
      ],
      commonPrefixes: ["docs/"],
      isTruncated: true,
      nextContinuationToken: "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=",
    });
  });

  test("keeps a key's spaces as they are; fields a store leaves out are null; other time forms become ISO", () => {
    const xml = page(
      "<Contents><Key>  spaced key  </Key><LastModified>2026-11-24T10:00:00Z</LastModified><Size>0</Size></Contents>",
    );
    expect(parseListObjectsV2(xml)!.contents).toEqual([
      { key: "  spaced key  ", size: 0, lastModified: "2026-11-24T10:00:00.000Z", etag: null, storageClass: null },
    ]);
  });

  test("an empty page", () => {
    expect(parseListObjectsV2(page(""))).toEqual({
      contents: [],
      commonPrefixes: [],
      isTruncated: false,
      nextContinuationToken: null,
    });
  });

  test("hands to the SDK what it is not sure of", () => {
    const unsure = [
      ["another document", "<Error><Code>AccessDenied</Code></Error>"],
      ["no IsTruncated", page(entry("a"), "")],
      ["IsTruncated not a boolean", page(entry("a"), "<IsTruncated>maybe</IsTruncated>")],
      ["CDATA", page(entry("<![CDATA[a]]>"))],
      ["a DTD", `<!DOCTYPE x [<!ENTITY e "x">]>${page(entry("&e;"))}`],
      ["a bare ampersand", page(entry("a & b"))],
      ["an unknown entity", page(entry("a &nbsp; b"))],
      ["a NUL reference", page(entry("a&#0;"))],
      ["a lone surrogate", page(entry("a&#xD800;"))],
      ["attributes on Contents", page('<Contents type="x"><Key>a</Key><Size>1</Size></Contents>')],
      ["a namespace prefix", page("<s3:Contents><s3:Key>a</s3:Key></s3:Contents>")],
      ["a Contents without a Key", page("<Contents><Size>1</Size></Contents>")],
      ["an unterminated Contents", page("<Contents><Key>a</Key><Size>1</Size>")],
      ["a negative size", page(entry("a").replace("<Size>12</Size>", "<Size>-1</Size>"))],
      ["a size that is no number", page(entry("a").replace("<Size>12</Size>", "<Size>1e400</Size>"))],
      ["a time that is no time", page(entry("a").replace("2026-11-24T10:00:00.123Z", "yesterday"))],
      ["a KeyCount that disagrees", page(entry("a"), "<KeyCount>2</KeyCount><IsTruncated>false</IsTruncated>")],
    ] as const;
    for (const [why, xml] of unsure) expect([why, parseListObjectsV2(xml)]).toEqual([why, undefined]);
  });
});

describe("xmlText", () => {
  test("decodes the five named entities and character references once", () => {
    expect(xmlText("&amp;lt; &#38; &#x26;")).toBe("&lt; & &");
    expect(xmlText("plain")).toBe("plain");
  });
  test("refuses what XML does not allow", () => {
    for (const bad of ["&", "a&b", "&#;", "&#x110000;", "&unknown;"])
      expect([bad, xmlText(bad)]).toEqual([bad, undefined]);
  });
});
