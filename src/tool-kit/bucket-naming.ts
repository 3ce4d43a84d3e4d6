/**
 * S3's general-purpose bucket naming rules, checked before anything is sent so
 * the model learns which rule it broke. Returns the broken rule, or undefined.
 */
export function bucketNameProblem(name: string): string | undefined {
  if (name.length < 3 || name.length > 63) return `must be 3 to 63 characters long (it has ${name.length})`;
  if (/[A-Z]/.test(name)) return "must not contain uppercase letters (use lowercase)";
  if (/_/.test(name)) return "must not contain underscores (use hyphens)";
  if (!/^[a-z0-9.-]+$/.test(name)) return "may contain only lowercase letters, digits, dots (.) and hyphens (-)";
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name)) return "must begin and end with a letter or digit";
  if (name.includes("..")) return "must not contain two adjacent dots";
  if (/\.-|-\./.test(name)) return "must not have a dot next to a hyphen";
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(name)) return "must not be formatted as an IP address";
  for (const prefix of ["xn--", "sthree-", "amzn-s3-demo-"]) {
    if (name.startsWith(prefix)) return `must not start with the reserved prefix "${prefix}"`;
  }
  for (const suffix of ["-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"]) {
    if (name.endsWith(suffix)) return `must not end with the reserved suffix "${suffix}"`;
  }
  return undefined;
}
