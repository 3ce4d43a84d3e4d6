/** Where an object is: its bucket, key and (optionally) version. */
export interface ObjectAddress {
  bucket: string;
  key: string;
  versionId?: string;
}
